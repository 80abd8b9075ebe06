import { readUntrustedFile } from '../security/untrusted-file.js';
import { usageSchema, type Usage } from '../bookbag/schema.js';
import { finiteOr } from '../security/sanitize.js';
import { recordSpend } from '../dispatch/spend.js';
import type { StateLayout } from '../state/layout.js';

/**
 * Usage a student reports in the small JSON file its brief names (`SCHOOL_USAGE_FILE`):
 * `{"inputTokens": n, "outputTokens": n, "costUsd": n}`. Every field is optional; numbers go
 * through `finiteOr` (N1.3), so NaN, negatives or strings become absent, never arithmetic poison.
 * A missing or unreadable file means "no usage reported", and says why.
 */
export function readUsage(path: string): { usage?: Usage; problem?: string } {
  let raw: unknown;
  try {
    const text = readUntrustedFile(path, 64 * 1024);
    if (text === undefined) return {};
    raw = JSON.parse(text);
  } catch (e) {
    return { problem: `usage file unreadable: ${(e as Error).message.slice(0, 200)}` };
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw))
    return { problem: 'usage file is not a JSON object' };
  const r = raw as Record<string, unknown>;
  const pick = (k: string) => {
    const n = finiteOr(r[k], -1);
    return n >= 0 ? n : undefined;
  };
  const candidate = {
    inputTokens: pick('inputTokens'),
    outputTokens: pick('outputTokens'),
    cachedInputTokens: pick('cachedInputTokens'),
    costUsd: pick('costUsd'),
  };
  const parsed = usageSchema.safeParse(
    Object.fromEntries(Object.entries(candidate).filter(([, v]) => v !== undefined)),
  );
  return parsed.success ? { usage: parsed.data } : { problem: 'usage file has no usable numbers' };
}

/**
 * One `spend.recorded` event per agent turn in `spend.jsonl` — key `spend:<crew_id>` for the first
 * turn, `spend:<crew_id>:turn-<n>` for correction turn n — through the dispatch office's ledger,
 * which the spend cap reads before every batch. Idempotent: a replayed turn records nothing new.
 */
export async function recordCrewSpend(
  layout: StateLayout,
  crew: { crewId: string; issueNumber: number; agent: string },
  usage: Usage,
  turn = 0,
): Promise<boolean> {
  return recordUsageSpend(layout, turn === 0 ? crew.crewId : `${crew.crewId}:turn-${turn}`, crew, usage);
}

/** One `spend.recorded` row for what an agent run reported, under `key` (`spend:<key>`). */
export async function recordUsageSpend(
  layout: StateLayout,
  key: string,
  who: { crewId: string; issueNumber: number; agent: string },
  usage: Usage,
): Promise<boolean> {
  return recordSpend(layout, key, {
    costUsd: usage.costUsd ?? 0,
    crewId: who.crewId,
    issueNumber: who.issueNumber,
    agent: who.agent,
    tokens: {
      input: usage.inputTokens ?? 0,
      output: usage.outputTokens ?? 0,
      ...(usage.cachedInputTokens ? { cachedInput: usage.cachedInputTokens } : {}),
    },
  });
}
