import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
import { redactText } from '../security/redact.js';
import type { StateLayout } from '../state/layout.js';

/**
 * The school's own failures the board says (docs/grading.md, "Verification: the base, the
 * difference, the school's failures"): a base whose own suite is red (`base-red`, said once per
 * base), an environment that failed a crew's verification (`environment-failed`: an install that
 * failed, a run killed by the machine, a red base without named results) and a program missing from
 * the sandbox (`program-not-found`). They are the crews' `crew.alert` lines of the audit log; the
 * board shows the newest of each distinct detail, so a red base is one line however many crews met
 * it.
 */
export interface SchoolAlert {
  at: string;
  kind: string;
  crewId?: string;
  issue?: number;
  detail: string;
}

export const SCHOOL_ALERT_KINDS = [
  'base-red',
  'environment-failed',
  'program-not-found',
  // Failed CI on a delivered pull request that is not the crew's (src/feedback/ci-alerts.ts).
  'ci-flaky',
  'ci-base-broken',
  'ci-rerun-refused',
  // A guarded merge GitHub refused (src/feedback/merge-gate.ts).
  'merge-refused',
] as const;
/** How many the board lists, newest first. */
export const ALERTS_SHOWN = 5;
/** The end of the audit log read for them: recent alerts are what the board is for. */
const TAIL_BYTES = 1024 * 1024;

function tail(path: string): string {
  const size = statSync(path).size;
  const start = Math.max(0, size - TAIL_BYTES);
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(size - start);
    readSync(fd, buf, 0, buf.length, start);
    const text = buf.toString('utf8');
    // A cut first line is not a record.
    return start > 0 ? text.slice(text.indexOf('\n') + 1) : text;
  } finally {
    closeSync(fd);
  }
}

/** The newest school alerts, one per distinct kind and detail (never throws: no alerts then). */
export function schoolAlerts(layout: StateLayout): SchoolAlert[] {
  try {
    const path = layout.file('audit');
    if (!existsSync(path)) return [];
    const seen = new Set<string>();
    const out: SchoolAlert[] = [];
    const lines = tail(path).split('\n').reverse();
    for (const line of lines) {
      if (!line.includes('"crew.alert"')) continue;
      let r: Record<string, unknown>;
      try {
        r = JSON.parse(line) as Record<string, unknown>;
      } catch {
        continue;
      }
      const kind = String(r.kind ?? '');
      if (r.type !== 'crew.alert' || !(SCHOOL_ALERT_KINDS as readonly string[]).includes(kind)) continue;
      const detail = redactText(String(r.detail ?? '')).slice(0, 1000);
      // The same failure met by many crews differs only in them: one line.
      const key = `${kind}\0${detail}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push({
        at: String(r.at ?? ''),
        kind,
        ...(typeof r.crewId === 'string' ? { crewId: r.crewId } : {}),
        ...(typeof r.issueNumber === 'number' ? { issue: r.issueNumber } : {}),
        detail,
      });
      if (out.length >= ALERTS_SHOWN) break;
    }
    return out;
  } catch {
    return [];
  }
}
