import type { Bookbag } from '../bookbag/schema.js';
import { bound, codeBlock, inlineCode, plainText, unlinkedText } from '../security/markdown.js';
import { redactText } from '../security/redact.js';

/** What grading decided, as the outbox keeps it for delivery. */
export interface DeliveryVerdict {
  decidedBy: string;
  code: string;
  score: number;
  reasons: string[];
  /** What proved the change (the evidence judge, src/grading/evidence.ts). */
  proof?: string;
}

export function deliveryMarker(issueNumber: number): string {
  return `<!-- school-core:delivery:issue-${issueNumber} -->`;
}

/**
 * One line of an issue title, bounded: it becomes a commit subject and a pull request title. Issue
 * text is anyone's: a `fixes #2` in it would close issue 2 when the commit reaches the default
 * branch, and an `@team` would be a mention, so both are shown, not acted on (unlinkedText).
 */
function oneLine(text: string | undefined, max = 72): string {
  return unlinkedText(bound((text ?? '').replace(/\s+/g, ' ').trim(), max));
}

export function pullRequestTitle(issueNumber: number, issueTitle?: string): string {
  const t = oneLine(issueTitle);
  return redactText(t ? `#${issueNumber}: ${t}` : `school-core: issue #${issueNumber}`);
}

export function commitMessage(record: Bookbag, issueTitle?: string): string {
  const t = oneLine(issueTitle);
  return redactText(
    [
      `school: issue #${record.issueNumber}${t ? `: ${t}` : ''}`,
      '',
      record.revision
        ? `Revision ${record.revision.round} of pull request #${record.revision.pr} by crew ${record.crewId} (agent ${record.agent}, daemon ${record.daemon}), answering its feedback; accepted by grading.`
        : `Work of crew ${record.crewId} (agent ${record.agent}, daemon ${record.daemon}), accepted by grading.`,
      '',
      `School-Issue: #${record.issueNumber}`,
      `School-Crew: ${record.crewId}`,
      ...(record.revision ? [`School-Revises: ${record.revision.revises}`] : []),
      '',
    ].join('\n'),
  );
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/** A table cell's code span: a `|` in it would end the cell. */
const cell = (text: string) => inlineCode(text, { table: true });

/**
 * The judges' reasons: what a reviewer wrote, what a test printed, a path the student chose — text,
 * never markup (src/security/markdown.ts). One line is prose; an output of several lines (a test's
 * tail) is a code block after its list.
 */
function reasonLines(reasons: readonly string[]): string[] {
  if (reasons.length === 0) return [];
  const shown = reasons.slice(0, 20);
  const prose = shown.filter((r) => !r.trim().includes('\n'));
  const output = shown.filter((r) => r.trim().includes('\n'));
  return [
    'Reasons:',
    ...prose.map((r) => `- ${plainText(r, 500)}`),
    '',
    ...output.flatMap((r) => [codeBlock(r, { max: 2000 }), '']),
  ];
}

/**
 * The pull request body: the verdict, the verification summary, the cost and a link to the issue.
 * `Closes #N` only when `delivery.closeIssue` is true. Passes the redactor like every write seam.
 * A revision's body names its round and describes it (its verdict, cost, base): delivering the
 * revision edits the body to it.
 */
export function pullRequestBody(
  record: Bookbag,
  verdict: DeliveryVerdict,
  o: {
    closeIssue: boolean;
    branch: string;
    /** The delivered commit: what the judges accepted. A verdict names the commit it is about. */
    sha?: string;
  },
): string {
  const v = record.verification;
  const u = record.usage;
  const cost =
    u && (u.costUsd !== undefined || u.inputTokens !== undefined || u.outputTokens !== undefined)
      ? [
          u.costUsd !== undefined ? `$${u.costUsd.toFixed(2)}` : undefined,
          u.inputTokens !== undefined ? `${u.inputTokens} input tokens` : undefined,
          u.outputTokens !== undefined ? `${u.outputTokens} output tokens` : undefined,
        ]
          .filter(Boolean)
          .join(', ')
      : 'not reported by the agent';
  const lines = [
    deliveryMarker(record.issueNumber),
    record.revision
      ? `Work for #${record.issueNumber}, revision ${record.revision.round} of this pull request: crew ${inlineCode(record.crewId)} (agent ${inlineCode(record.agent)}) answered its feedback, accepted by grading. Each round is a commit on the branch; this is the latest.`
      : `Work for #${record.issueNumber} by crew ${inlineCode(record.crewId)} (agent ${inlineCode(record.agent)}), accepted by grading.`,
    '',
    '| | |',
    '|---|---|',
    `| Verdict | accepted by the ${plainText(verdict.decidedBy, 40)} judge: ${cell(verdict.code)}, score ${verdict.score.toFixed(2)} |`,
    ...(o.sha
      ? [
          `| Judged at | ${cell(o.sha.slice(0, 12))}: the verdict holds for this commit only; a later push to the branch is judged again |`,
        ]
      : []),
    ...(verdict.proof ? [`| Proved by | ${plainText(verdict.proof, 300)} |`] : []),
    `| Verification | ${
      v
        ? `${cell(v.command.join(' '))} ${v.passed ? 'passed' : 'failed'} (exit ${v.exitCode ?? 'none'}, ${seconds(v.durationMs)}${v.timedOut ? ', timed out' : ''})`
        : 'none recorded'
    } |`,
    `| Cost | ${cost} |`,
    `| Changed files | ${record.changedFiles.length} |`,
    ...(record.revision ? [`| Revises | crew ${cell(record.revision.revises)} |`] : []),
    `| Base | ${cell(record.baseSha.slice(0, 12))} |`,
    `| Branch | ${cell(o.branch)} |`,
    '',
    ...reasonLines(verdict.reasons),
    o.closeIssue ? `Closes #${record.issueNumber}` : `Issue: #${record.issueNumber}`,
  ];
  return redactText(lines.join('\n'));
}
