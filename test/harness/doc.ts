import type { TestResult } from './report.js';

/** docs/resilience.md: the measured report, how it is computed, and how to reproduce it. */
export function renderDoc(summary: string, tests: readonly TestResult[]): string {
  const list = tests
    .map((t) => `- ${t.passed ? 'pass' : t.knownGap ? 'known gap' : 'FAIL'} — ${t.title}`)
    .join('\n');
  return `# Resilience report (seed 001, worst day)

Every error-boundary node of seed 001 (N1.1–N8.2) is a named regression test in
\`test/regression/d<dimension>-*.test.ts\`, run against the wired system: \`runLoop\`, \`planStep\` /
\`runStep\`, \`drain\`, \`saveCheckpoint\`, crew runners and drivers as real processes, real git.
The fault harness (\`test/harness/resilience.ts\`) then attacks one state directory with up to 20 OS
processes at once and checks the client-visible history.

## How to reproduce

\`\`\`sh
npm run resilience -- --short          # CI: ≥ 200 SIGKILLs, then the regression suite and this table
npm run resilience -- --iterations 40  # longer soak: 20 kills per iteration
npm run resilience -- --short --no-suite   # the harness alone
npm run resilience -- --short --write-doc  # also rewrite this file
\`\`\`

## What the harness does

- Twenty slots, each with a fixed operation kind: enqueue (bookbag + grading job), plan
  (\`planStep\` → \`planDispatch\`), drain (real judges; the judge crashes on some jobs with a secret in
  its error), checkpoint save to a directory source and to a branch of a bare repository, crew
  lease life (claim a slot, hold it, finish, release), and torn lines (an unterminated line left
  under the file's lock, as a writer killed mid-append leaves it).
- Each process is SIGKILLed 0–3 s after it reports ready (a random point of its operation stream; start-up time varies with load, so the delay counts from READY) and
  replaced at once, until \`iterations × 20\` kills were injected.
- A process killed while holding a lock (a drain inside its wave's transaction, a torn-line writer)
  leaves the lock behind; the next process takes it over as soon as it sees the owner is gone
  ([architecture.md](architecture.md), "Locks"), so a kill costs the others no wait.
- A worker appends an ack line (fsynced) only after an operation returned. A CorruptStateError or a
  JSON parse error of a view is written as a violation.
- Afterwards: each daemon's driver reconciles (crews whose runner is gone are marked lost, leases
  released); drains run with the clock past every grading lease until nothing is pending.

## Invariants

| Invariant | Checked how |
|---|---|
| no acknowledged event lost | every acked enqueue is in the queue fold; every acked plan's crews are in the registry; every acked verdict is graded |
| no job graded twice | ≤ 1 \`job.graded\` event per job key; ≤ 1 \`score.applied\` per crew id (raw events) |
| no EMA applied twice | ledger count per agent = graded jobs of that agent |
| no partially written file parsed | workers report CorruptStateError / view parse errors; every view parses after the run; both checkpoints verify against their manifests |
| no lease or running crew leaked | after reconciliation: no lease, no running crew, no job pending or claimed |
| no secret persisted | the cores of planted GitHub, GitHub PAT, AWS, Slack, Anthropic, OpenAI, JWT and PEM secrets (in issue titles and bodies, bookbag reports and logs, crew reasons, judge errors) in no byte of the state dir, the directory checkpoints, or any object of the bare repository |

## Score

\`score = max(0, 10 × passing node tests / node tests − 2 × violations)\` per dimension, where a
violation counts against the dimension of its invariant (secrets → 1; lost acks and double grades
→ 2; partial parses and unverifiable checkpoints → 5; EMA count → 6; jobs left claimed → 7; leaked
leases → 8). A node test marked as a known gap (\`it.fails\`, documented in the test) counts as not
passing. Overall = mean of the eight dimension scores.

## Measured

\`\`\`
${summary}
\`\`\`

## Node tests

${list}
`;
}
