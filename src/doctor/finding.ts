/**
 * What `school doctor` found on a runner machine: one finding per check, each saying what it saw
 * and, when it is not fine, what to do. A blocker means a crew placed here would fail (the roster
 * job then does not beat, so the planner leaves this daemon alone); a warning is worth fixing but
 * does not stop the school.
 */
export type FindingStatus = 'ok' | 'warning' | 'blocker' | 'skipped';

export interface Finding {
  /** Stable id of the check: node, git, agent:<id>, sandbox, disk, orca:<daemon>, network:<host:port>, runner-owner, config. */
  check: string;
  status: FindingStatus;
  /** What was seen, in plain words. */
  detail: string;
  /** What to do; set on every warning and blocker. */
  fix?: string;
}

export interface DoctorReport {
  findings: Finding[];
  blockers: number;
  warnings: number;
}

export function report(findings: Finding[]): DoctorReport {
  return {
    findings,
    blockers: findings.filter((f) => f.status === 'blocker').length,
    warnings: findings.filter((f) => f.status === 'warning').length,
  };
}

const MARK: Record<FindingStatus, string> = {
  ok: 'ok',
  warning: 'warning',
  blocker: 'BLOCKER',
  skipped: 'skipped',
};

/** The verdict line: ready, ready with warnings, or not ready. */
export function verdict(r: DoctorReport): string {
  if (r.blockers)
    return `Not ready: ${r.blockers} blocker(s)${r.warnings ? ` and ${r.warnings} warning(s)` : ''}. Fix the blockers, then run school doctor again.`;
  if (r.warnings) return `Ready, with ${r.warnings} warning(s).`;
  return 'Ready.';
}

/** For a terminal: one line per finding, the fix indented under it. */
export function doctorText(r: DoctorReport): string {
  const width = Math.max(...r.findings.map((f) => f.check.length), 5);
  const lines = r.findings.flatMap((f) => [
    `${MARK[f.status].padEnd(8)} ${f.check.padEnd(width)}  ${f.detail}`,
    ...(f.fix ? [`${' '.repeat(9 + width + 2)}→ ${f.fix}`] : []),
  ]);
  return [...lines, '', verdict(r), ''].join('\n');
}

const cell = (s: string) =>
  s
    .replace(/[&<>]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' })[c]!)
    .replace(/\|/g, '\\|')
    .replace(/\n/g, ' ');

/** For a job summary: a markdown table, blockers and warnings first. */
export function doctorSummary(r: DoctorReport, title = 'school doctor'): string {
  const order: FindingStatus[] = ['blocker', 'warning', 'ok', 'skipped'];
  const rows = [...r.findings]
    .sort((a, b) => order.indexOf(a.status) - order.indexOf(b.status))
    .map((f) => `| ${MARK[f.status]} | \`${cell(f.check)}\` | ${cell(f.detail)} | ${cell(f.fix ?? '')} |`);
  return [
    `### ${cell(title)}`,
    '',
    `**${verdict(r)}**`,
    '',
    '| Status | Check | Found | What to do |',
    '|---|---|---|---|',
    ...rows,
    '',
  ].join('\n');
}
