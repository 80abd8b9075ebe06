import type { SchoolConfig } from '../config/schema.js';
import { runsOn, runsOnText } from '../dispatch/fleet/runs-on.js';
import type { Finding } from './finding.js';

/**
 * Which runner each daemon's crew and roster jobs need (fleet.daemons[].labels, or `<prefix>-<id>`),
 * and whether the repository has one. A daemon whose labels no runner has is a school that never
 * beats: its roster job waits in the queue until GitHub gives up on it, and the plan says only that
 * no heartbeat came. GitHub lists a repository's self-hosted runners with their labels
 * (`GET /repos/{owner}/{repo}/actions/runners`), but only to a token with the administration
 * permission (a repository admin's, never the workflow's GITHUB_TOKEN), and never the runners of its
 * organization or enterprise: where it cannot be asked, the doctor says so and what to check by hand.
 */

interface Runner {
  name: string;
  status: string;
  labels: { name: string }[];
}

type Daemon = SchoolConfig['fleet']['daemons'][number];

export async function checkRunnerLabels(o: {
  daemons: readonly Daemon[];
  /** The loop's runner-label-prefix (default school). */
  prefix?: string | undefined;
  /** owner/name whose runners to list; unset: nothing is asked. */
  repository?: string | undefined;
  token?: string | undefined;
  apiUrl?: string | undefined;
  fetch?: typeof fetch;
  timeoutMs?: number;
}): Promise<Finding[]> {
  const findings: Finding[] = [];
  const self: { index: number; d: Daemon; labels: string[] }[] = [];
  o.daemons.forEach((d, index) => {
    const r = runsOn(d, o.prefix);
    if ('hosted' in r) {
      findings.push({
        check: `labels:${d.id}`,
        status: 'ok',
        detail: `runs on ${runsOnText(r)} (fleet.daemons[${index}].hosted): no runner to register`,
      });
      return;
    }
    self.push({ index, d, labels: r.selfHosted });
  });
  if (!self.length) return findings;
  const listed = await listRunners(o);
  for (const { index, d, labels } of self) {
    const check = `labels:${d.id}`;
    const needs = `needs ${runsOnText({ selfHosted: labels })} (fleet.daemons[${index}]${d.labels.length ? '.labels' : `: ${labels[1]} from the loop's runner-label-prefix and its id`})`;
    const register = `register a runner with them (./config.sh --url <repository> --labels ${labels.slice(1).join(',')}), or set fleet.daemons[${index}].labels in school.yml to the labels a runner has`;
    if ('why' in listed) {
      findings.push({ check, status: 'skipped', detail: `${needs}; ${listed.why}` });
      continue;
    }
    const has = listed.runners.filter((r) => labels.every((l) => r.labels.some((x) => x.name === l)));
    if (has.length) {
      const online = has.filter((r) => r.status === 'online');
      findings.push(
        online.length
          ? { check, status: 'ok', detail: `${needs}: ${online.map((r) => r.name).join(', ')} online` }
          : {
              check,
              status: 'warning',
              detail: `${needs}: ${has.map((r) => r.name).join(', ')} ${has.length > 1 ? 'have' : 'has'} them but none is online, so its jobs wait in the queue`,
              fix: 'start the runner (./run.sh, or its service) on its machine',
            },
      );
      continue;
    }
    const others = listed.runners.map((r) => `${r.name} [${r.labels.map((l) => l.name).join(', ')}]`);
    // Runners of the organization serve the repository without being listed to it: with none of its
    // own, the repository may well run on those, so that is a warning, not a blocker.
    findings.push(
      others.length
        ? {
            check,
            status: 'blocker',
            detail: `${needs}, and no self-hosted runner of ${o.repository} has them (${others.join('; ')}): its crew and roster jobs would wait in the queue and the school would never plan on it`,
            fix: register,
          }
        : {
            check,
            status: 'warning',
            detail: `${needs}, and ${o.repository} has no self-hosted runner of its own (runners of its organization are not listed to it, so one there may have them)`,
            fix: `if no organization runner has these labels, ${register}`,
          },
    );
  }
  return findings;
}

/** The repository's self-hosted runners, or why they could not be listed. */
async function listRunners(o: {
  repository?: string | undefined;
  token?: string | undefined;
  apiUrl?: string | undefined;
  fetch?: typeof fetch;
  timeoutMs?: number;
}): Promise<{ runners: Runner[] } | { why: string }> {
  if (!o.repository)
    return {
      why: 'not checked against the runners: no repository (school.yml repository, or GITHUB_REPOSITORY)',
    };
  if (!o.token)
    return {
      why: "not checked against the runners: no GITHUB_TOKEN (a repository admin's token lists them; or look under Settings → Actions → Runners)",
    };
  const api = (o.apiUrl || 'https://api.github.com').replace(/\/+$/, '');
  const runners: Runner[] = [];
  for (let page = 1; page <= 10; page++) {
    const url = `${api}/repos/${o.repository}/actions/runners?per_page=100&page=${page}`;
    let r: Response;
    try {
      r = await (o.fetch ?? fetch)(url, {
        headers: {
          accept: 'application/vnd.github+json',
          authorization: `Bearer ${o.token}`,
          'x-github-api-version': '2022-11-28',
        },
        signal: AbortSignal.timeout(o.timeoutMs ?? 10_000),
      });
    } catch (e) {
      return { why: `not checked against the runners: GitHub could not be asked (${(e as Error).message})` };
    }
    if (r.status === 401 || r.status === 403 || r.status === 404)
      return {
        why: `not checked against the runners: GitHub answered ${r.status} to the list of ${o.repository}'s runners, which needs a token with the administration permission (a repository admin's; the workflow's GITHUB_TOKEN never has it). Check the labels under Settings → Actions → Runners`,
      };
    if (!r.ok) return { why: `not checked against the runners: GitHub answered ${r.status}` };
    const body = (await r.json()) as { total_count?: number; runners?: Runner[] };
    const got = Array.isArray(body.runners) ? body.runners : [];
    runners.push(...got);
    if (got.length < 100 || runners.length >= (body.total_count ?? 0)) break;
  }
  return { runners };
}
