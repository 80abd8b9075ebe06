import { createHash } from 'node:crypto';
import { existsSync, lstatSync } from 'node:fs';
import { join } from 'node:path';
import { CREW_ID_PATTERN } from '../bookbag/schema.js';
import {
  claimFileSchema,
  claimName,
  claimPrefix,
  CLAIMS_DIR,
  MAX_CLAIM_FILE,
  type ClaimFile,
  type ClaimPort,
} from '../dispatch/leases/claims.js';
import type { CrewRegistry } from '../dispatch/logs/registry.js';
import { message } from '../errors.js';
import type { CrewClaimed } from '../schemas/crew.js';
import type { StateEvent } from '../state/event-log.js';
import { readUntrustedBytes } from '../security/untrusted-file.js';
import type { HandoffName } from './name.js';

/**
 * `crew.claimed` from a crew job's handoff (one queue per run, src/dispatch/leases/claims.ts). The handoff is
 * untrusted, so a claim is taken only when the run's artifact service vouches for it: the service
 * lists the crew's claim artifact with exactly the digest of the claim file this handoff carries,
 * and that file names this handoff's daemon, run, plan attempt and job attempt. Whatever ran in
 * that job cannot make another job's claim its own: the file names the other daemon, and a file of
 * its own has a digest the service does not list.
 */
export type ClaimListing = (prefix: string) => Promise<Map<string, string[]> | string>;

/** Lists each prefix at most once per import; a failure is kept as its reason. */
export function claimListing(port: ClaimPort | undefined): ClaimListing | undefined {
  if (!port) return undefined;
  const seen = new Map<string, Promise<Map<string, string[]> | string>>();
  return (prefix) => {
    let p = seen.get(prefix);
    if (!p) {
      p = port.list(prefix).catch((e: unknown) => message(e));
      seen.set(prefix, p);
    }
    return p;
  };
}

export interface ClaimCheck {
  daemon: string;
  /** The handoff's directory and its name's parts. */
  dir: string;
  handoff: HandoffName;
  /** The registry with this handoff's earlier crew events applied. */
  registry: CrewRegistry;
  list?: ClaimListing;
}

/** Why this `crew.claimed` is refused, or undefined when the claim is the run's. */
export async function claimRefusal(e: StateEvent, c: ClaimCheck): Promise<string | undefined> {
  const d = e.data as Partial<CrewClaimed>;
  const id = d.crewId;
  if (typeof id !== 'string' || !CREW_ID_PATTERN.test(id)) return 'names no crew';
  if (e.key !== `claimed:${id}`) return 'its key is not claimed:<crewId>';
  if (d.daemon !== c.daemon) return `names daemon ${String(d.daemon)}, not ${c.daemon}`;
  if (d.jobAttempt !== c.handoff.jobAttempt)
    return `names job attempt ${String(d.jobAttempt)}, but the handoff is of job attempt ${c.handoff.jobAttempt}`;
  if (typeof d.nonce !== 'string' || typeof d.sha256 !== 'string') return 'names no nonce or digest';
  const crew = c.registry.crews[id];
  if (!crew) return `crew ${id} is not planned`;
  if (!crew.eligible?.includes(c.daemon))
    return `crew ${id} is not a shared crew daemon ${c.daemon} may claim`;
  const k = crew.claimed;
  // A handoff imported again: the same claim, which the log's dedup skips.
  const again =
    k !== undefined &&
    k.daemon === d.daemon &&
    k.jobAttempt === d.jobAttempt &&
    k.nonce === d.nonce &&
    k.sha256 === d.sha256;
  // The state took this very claim when the run's listing vouched for it (the grade imports the
  // handoffs again when it applies the verdicts, with no claim service): nothing new to check.
  if (again) return undefined;
  if (k) return `crew ${id} is already claimed by daemon ${k.daemon}`;
  if (crew.status !== 'planned') return `crew ${id} is already ${crew.status}`;
  if (!c.list) return "the run's claims cannot be listed here";
  const file = readClaimFile(c.dir, id);
  if (typeof file === 'string') return file;
  const h = c.handoff;
  const f = file.claim;
  if (
    f.crewId !== id ||
    f.daemon !== c.daemon ||
    f.runId !== h.runId ||
    f.attempt !== h.attempt ||
    f.jobAttempt !== h.jobAttempt ||
    f.nonce !== d.nonce
  )
    return `its claim file names another claim (crew ${f.crewId}, daemon ${f.daemon}, run ${f.runId}, attempt ${f.attempt}, job attempt ${f.jobAttempt}, or another nonce)`;
  if (file.sha256 !== d.sha256) return 'its claim file does not match the digest the event records';
  const listed = await c.list(claimPrefix(h.runId, h.attempt));
  if (typeof listed === 'string') return `the run's claims could not be listed: ${listed}`;
  const name = claimName(h.runId, h.attempt, id);
  const digests = listed.get(name) ?? [];
  if (!digests.includes(file.sha256))
    return digests.length
      ? `the run's claim ${name} is another job's (its digest differs)`
      : `the run has no claim ${name}`;
  // Honest jobs never claim a name twice (a re-run skips what any attempt claimed): when the name was
  // created more than once, which claim ran the crew cannot be told, so none is taken.
  if (digests.length > 1) return `crew ${id} was claimed ${digests.length} times in this run`;
  return undefined;
}

function readClaimFile(dir: string, crewId: string): { claim: ClaimFile; sha256: string } | string {
  const rel = `${CLAIMS_DIR}/${crewId}.json`;
  const path = join(dir, CLAIMS_DIR, `${crewId}.json`);
  if (!existsSync(path) || !lstatSync(path).isFile()) return `its claim file ${rel} is missing`;
  const bytes = readUntrustedBytes(path, MAX_CLAIM_FILE, rel);
  if (typeof bytes === 'string') return `its claim file: ${bytes}`;
  let claim: ClaimFile;
  try {
    claim = claimFileSchema.parse(JSON.parse(bytes.toString('utf8')));
  } catch {
    return `its claim file ${rel} is not a claim file`;
  }
  return { claim, sha256: createHash('sha256').update(bytes).digest('hex') };
}
