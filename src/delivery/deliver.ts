import type { DeliveryConfig, SchoolConfig } from '../config/schema.js';
import { readBookbag } from '../bookbag/store.js';
import { BookbagIncompleteError, PatchIntegrityError } from '../bookbag/store.js';
import { describeSecrets, scanPatch } from '../security/secret-scan.js';
import { audit } from '../state/audit.js';
import type { StateLayout } from '../state/layout.js';
import {
  commitMessage,
  deliveryMarker,
  pullRequestBody,
  pullRequestTitle,
  type DeliveryVerdict,
} from './body.js';
import { branchName, commitPatch, pushBranch, updateRef } from './branch.js';
import { DeliveredTreeError, DeliveryError, DeliveryRefusedError } from './errors.js';
import { refuseProtectedPaths } from './protected.js';
import { isCleanMerge } from './refresh-base.js';
import { ensurePullRequest, type PullRequestRef, type PullsPort } from './pull-request.js';

/**
 * Delivery of accepted work (docs/delivery.md). Called by the grading outbox after a crew's grade is
 * durable, in the job that runs no untrusted code:
 * 1. the bookbag is read through the scoped reader as a grader: its diff must match the digest the
 *    done flag and the record vouch for, or nothing is delivered (refused, never retried, an
 *    alert: the school's error); a patch that adds a credential is refused too (`secret_in_patch`);
 * 2. `branch`: one commit on the crew's base with its patch — the collected bytes, applied as they
 *    are, the tree checked blob by blob against what the student's worktree held (./branch.ts) —
 *    on `school/issue-<N>` in `repoPath`;
 * 3. `pull-request`: that commit pushed to `origin` (the token only in the hardened git `auth`) and a
 *    pull request found by its head or opened (draft by default); a revision edits its body.
 * Each step is idempotent, so the outbox may run it again after any crash or failure.
 */
export type ActiveDeliveryMode = 'branch' | 'pull-request';

export interface DeliveryRequest {
  crewId: string;
  issueNumber: number;
  verdict: DeliveryVerdict;
}

export interface DeliveryResult {
  mode: ActiveDeliveryMode;
  branch: string;
  sha: string;
  /** False when the branch already held a later crew's commit (kept). */
  updated: boolean;
  pullRequest?: PullRequestRef;
}

export interface Deliverer {
  mode: ActiveDeliveryMode;
  deliver(request: DeliveryRequest): Promise<DeliveryResult>;
}

/**
 * Where the default is resolved: `delivery.mode` when set; otherwise the caller says where it runs —
 * the drain-grading action passes `actions: true` (pull requests), the `school` CLI `actions: false`
 * (local branches).
 */
export function resolveDeliveryMode(delivery: DeliveryConfig, where: { actions: boolean }) {
  return delivery.mode ?? (where.actions ? 'pull-request' : 'branch');
}

export interface DelivererOptions {
  config: SchoolConfig;
  layout: StateLayout;
  mode: ActiveDeliveryMode;
  /** The pulls API; required for `pull-request`. */
  pulls?: PullsPort;
  /** GIT_CONFIG_* carrying the token as an http.extraheader (`authEnv` in src/process/git.ts). */
  gitAuth?: Readonly<Record<string, string>>;
  /** The issue's title from the curriculum, for the commit subject and the PR title. */
  issueTitle?: (issueNumber: number) => string | undefined;
}

export function createDeliverer(o: DelivererOptions): Deliverer {
  const d = o.config.delivery;
  return {
    mode: o.mode,
    async deliver(req) {
      let bag;
      try {
        bag = await readBookbag(o.layout, req.crewId, { role: 'grader' });
      } catch (e) {
        if (e instanceof PatchIntegrityError) await alert(o.layout, req, 'patch-integrity', e.message);
        if (e instanceof BookbagIncompleteError) throw new DeliveryRefusedError(e.message);
        throw e;
      }
      const record = bag.record;
      if (record.issueNumber !== req.issueNumber) {
        throw new DeliveryRefusedError(
          `bookbag ${req.crewId} is for issue #${record.issueNumber}, not #${req.issueNumber}`,
        );
      }
      // A credential in the change: never pushed, whatever judged it (src/security/secret-scan.ts).
      const secrets = record.refusal?.findings ?? scanPatch(bag.diff);
      if (secrets.length) {
        const why = `secret_in_patch: ${describeSecrets(secrets)}`;
        await alert(o.layout, req, 'secret-in-patch', why);
        throw new DeliveryRefusedError(why);
      }
      // Empty: refused, unless the crew is a clean refresh that needed no change — its commit is the
      // school's merge of the new base into the pull request (./refresh-base.ts).
      if (bag.diff.trim() === '' && !(await isCleanMerge(o.config.repoPath, record.baseSha)))
        throw new DeliveryRefusedError(`crew ${req.crewId} changed nothing`);
      const title = o.issueTitle?.(req.issueNumber);
      const date = record.timings.finishedAt;
      const sha = await commitPatch({
        repoPath: o.config.repoPath,
        baseSha: record.baseSha,
        diff: bag.patch,
        message: commitMessage(record, title),
        author: d.author,
        date,
        auth: o.gitAuth,
      }).catch(async (e: unknown) => {
        // The commit does not hold what the student's worktree held: the school's error, said so.
        if (e instanceof DeliveredTreeError) await alert(o.layout, req, 'patch-integrity', e.message);
        throw e;
      });
      // Protected paths again, on the tree about to be pushed, whatever judged it (./protected.ts).
      await refuseProtectedPaths(o.config, { baseSha: record.baseSha, sha, fences: record.fences });
      const branch = branchName(req.issueNumber);
      if (o.mode === 'branch') {
        const updated = await updateRef(o.config.repoPath, `refs/heads/${branch}`, sha, date);
        return { mode: 'branch', branch, sha, updated };
      }
      if (!o.pulls) {
        throw new DeliveryError(
          'pull-request delivery needs a token and the repository (the delivery-token input, or GITHUB_TOKEN for the CLI)',
        );
      }
      const updated = await pushBranch({
        repoPath: o.config.repoPath,
        branch,
        sha,
        date,
        auth: o.gitAuth,
      });
      const body = pullRequestBody(record, req.verdict, { closeIssue: d.closeIssue, branch, sha });
      const pr = await ensurePullRequest(o.pulls, {
        head: branch,
        ...(d.base ? { base: d.base } : {}),
        title: pullRequestTitle(req.issueNumber, title),
        body,
        draft: d.draft,
      });
      // A revision pushed onto the pull request: its body described the round before, whose verdict
      // and base are no longer the head's. Edited only when it differs (a retried delivery writes
      // nothing) and only while it is still the school's (it starts with the delivery marker): a
      // description a person rewrote is theirs. Not pushed (someone else's commit is the head): left.
      if (record.revision && updated && !pr.created && pr.body !== undefined && pr.body !== body) {
        if (pr.body.trimStart().startsWith(deliveryMarker(req.issueNumber)))
          await o.pulls.updateBody(pr.number, body);
      }
      return { mode: 'pull-request', branch, sha, updated, pullRequest: { number: pr.number, url: pr.url } };
    },
  };
}

/** Tells the maintainers why a crew's change was not delivered (the audit trail, as grading's alerts). */
async function alert(layout: StateLayout, req: DeliveryRequest, kind: string, detail: string): Promise<void> {
  await audit(layout, 'delivery.alert', { crewId: req.crewId, issueNumber: req.issueNumber, kind, detail });
}
