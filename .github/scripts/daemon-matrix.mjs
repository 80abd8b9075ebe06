#!/usr/bin/env node
// Turns dispatch-crew's plan `matrix` output into the crew job's matrix: daemon ids only.
//
// Job outputs are visible to every later job and in the run's UI, so nothing but identifiers may pass
// through them (docs/architecture.md: never secrets or issue text in job outputs). This step re-validates the
// plan's matrix instead of trusting it: every daemon id must match the fleet registry's id pattern
// and every crew id the crew id pattern, or the step fails. The full matrix (ids only) is written to
// the file given as the first argument, which travels to the crews in the plan artifact.
//
// Input:  $SCHOOL_MATRIX  JSON: [{daemon, labels?, assignments: [crewId…]}] or {include: [...]}
//         (a daemon with no assignments gets no crew job)
//         $SCHOOL_FLEET   JSON: every configured daemon id (dispatch-crew's `fleet` output), work or
//         not; the roster job beats each of them so the next plan finds them online
//         $SCHOOL_RUN_ATTEMPT  the plan job's github.run_attempt (digits). Later jobs name the plan and
//         handoff artifacts with it: a job re-run by "Re-run failed jobs" has a higher run_attempt
//         of its own, but must find the artifacts of the attempt whose plan it executes
//         $SCHOOL_REVISIONS  dispatch-crew's `revisions` output: 'true' when a planned crew revises a
//         delivered pull request (the crew jobs then fetch the school's branches); else false
//         $SCHOOL_RUNNERS  dispatch-crew's `runners` output: {daemon id: GitHub-hosted runner label}
//         for the daemons with fleet.daemons[].hosted, {daemon id: [label…]} for a self-hosted
//         daemon with fleet.daemons[].labels; the others run on [self-hosted, <prefix>-<id>]
//         $SCHOOL_RUNNER_PREFIX  the loop's runner-label-prefix (default school)
// Output: $GITHUB_OUTPUT  daemons=<JSON array of ids>, crews=<count>, has-work=true|false,
//         fleet=<JSON array of ids>, attempt=<digits>, revisions=true|false,
//         runners=<JSON {id: runs-on}>: every fleet daemon's `runs-on`, its hosted label,
//         ["self-hosted", <its labels>…] or ["self-hosted", "<prefix>-<id>"]

import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

// fleet.daemons[].id in school.yml (DAEMON_ID_PATTERN in src/config/schema.ts): it ends artifact
// names, so parts joined by single dashes, the first part holding a letter.
const DAEMON_ID = /^(?=.{1,39}$)[a-z0-9]*[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/;
const CREW_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

function fail(text) {
  process.stderr.write(`daemon-matrix: ${text}\n`);
  process.exit(1);
}

function entries(raw) {
  if (raw === undefined || raw === null || raw === '') return [];
  const list = Array.isArray(raw) ? raw : Array.isArray(raw.include) ? raw.include : undefined;
  if (!list) fail('the plan matrix must be a JSON array (or {"include": [...]}).');
  return list.map((entry, i) => {
    const daemon = entry?.daemon;
    if (typeof daemon !== 'string' || !DAEMON_ID.test(daemon)) {
      fail(
        `entry ${i}: daemon id must match ${DAEMON_ID} (lower-case letters and digits in parts joined by single dashes, the first holding a letter).`,
      );
    }
    const assignments = entry.assignments ?? [];
    if (!Array.isArray(assignments)) fail(`entry ${i}: assignments must be a list of crew ids.`);
    for (const crew of assignments) {
      const id = typeof crew === 'string' ? crew : crew?.crewId;
      if (typeof id !== 'string' || !CREW_ID.test(id))
        fail(`entry ${i}: a crew id does not match ${CREW_ID}.`);
    }
    return {
      daemon,
      assignments: assignments.map((crew) => (typeof crew === 'string' ? crew : crew.crewId)),
    };
  });
}

function fleetIds(raw) {
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) fail('SCHOOL_FLEET must be a JSON array of daemon ids.');
  return raw.map((entry, i) => {
    const id = typeof entry === 'string' ? entry : entry?.id;
    if (typeof id !== 'string' || !DAEMON_ID.test(id)) {
      fail(
        `fleet entry ${i}: daemon id must match ${DAEMON_ID} (lower-case letters and digits in parts joined by single dashes, the first holding a letter).`,
      );
    }
    return id;
  });
}

function json(name) {
  const text = process.env[name];
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    fail(`${name} is not valid JSON.`);
  }
}

const ATTEMPT = /^[1-9][0-9]{0,5}$/;
const attempt = process.env.SCHOOL_RUN_ATTEMPT || '1';
if (!ATTEMPT.test(attempt))
  fail(`SCHOOL_RUN_ATTEMPT must be a positive whole number, found ${JSON.stringify(attempt.slice(0, 20))}.`);

const revisions = process.env.SCHOOL_REVISIONS || 'false';
if (revisions !== 'true' && revisions !== 'false')
  fail(`SCHOOL_REVISIONS must be true or false, found ${JSON.stringify(revisions.slice(0, 20))}.`);

// A runner label: what `runs-on` takes, nothing an expression or a list could be made of.
const LABEL = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
const prefix = process.env.SCHOOL_RUNNER_PREFIX || 'school';
if (!LABEL.test(prefix)) fail(`SCHOOL_RUNNER_PREFIX must be a runner label (${LABEL}).`);
const hosted = json('SCHOOL_RUNNERS') ?? {};
if (typeof hosted !== 'object' || Array.isArray(hosted)) fail('SCHOOL_RUNNERS must be a JSON object.');
const declared = {};
for (const [id, label] of Object.entries(hosted)) {
  if (!DAEMON_ID.test(id)) fail(`SCHOOL_RUNNERS: daemon id ${JSON.stringify(id.slice(0, 40))} is not valid.`);
  if (Array.isArray(label)) {
    // A self-hosted daemon's own labels (fleet.daemons[].labels), besides self-hosted.
    if (
      label.length === 0 ||
      label.length > 10 ||
      !label.every((l) => typeof l === 'string' && LABEL.test(l))
    )
      fail(`SCHOOL_RUNNERS: the labels of ${id} must be 1 to 10 runner labels (${LABEL}).`);
    declared[id] = ['self-hosted', ...new Set(label.filter((l) => l !== 'self-hosted'))];
    continue;
  }
  if (typeof label !== 'string' || !LABEL.test(label) || label === 'self-hosted')
    fail(`SCHOOL_RUNNERS: the runner of ${id} must be a GitHub-hosted runner label (${LABEL}).`);
  declared[id] = label;
}

const raw = json('SCHOOL_MATRIX');
const fleet = [...new Set(fleetIds(json('SCHOOL_FLEET')))].sort();
const matrix = entries(raw).filter((e) => e.assignments.length > 0);
const daemons = [...new Set(matrix.map((e) => e.daemon))].sort();
const crews = matrix.reduce((n, e) => n + e.assignments.length, 0);
const runners = Object.fromEntries(
  [...new Set([...fleet, ...daemons])].map((id) => [id, declared[id] ?? ['self-hosted', `${prefix}-${id}`]]),
);

const file = process.argv[2];
if (file) {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify(matrix, null, 2) + '\n');
}
const lines = [
  `daemons=${JSON.stringify(daemons)}`,
  `crews=${crews}`,
  `has-work=${daemons.length > 0}`,
  `fleet=${JSON.stringify(fleet)}`,
  `attempt=${attempt}`,
  `revisions=${revisions}`,
  `runners=${JSON.stringify(runners)}`,
];
if (process.env.GITHUB_OUTPUT) appendFileSync(process.env.GITHUB_OUTPUT, lines.join('\n') + '\n');
process.stdout.write(
  `daemon-matrix: ${crews} crew(s) on ${daemons.length} daemon(s): ${daemons.join(', ') || 'none'}\n`,
);
