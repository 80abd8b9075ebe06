import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { ConfigError } from '../../errors.js';
import type { RunContext } from '../../process/run-context.js';

/**
 * How often the school's workflow runs, from its cron schedule, and the roster heartbeat TTL that
 * follows from it. On GitHub a daemon beats only when the loop runs on its runner, so a TTL shorter
 * than the schedule interval leaves every daemon offline at the next plan and the school plans
 * nothing. The heartbeats of a run are recorded once all of its roster jobs are done; a roster job
 * waiting for a runner that is away holds them back until the next run replaces it, so the TTL
 * covers two intervals plus a margin for GitHub's schedule delays.
 */

const FIELDS = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: 'JAN FEB MAR APR MAY JUN JUL AUG SEP OCT NOV DEC' },
  { name: 'day of week', min: 0, max: 7, names: 'SUN MON TUE WED THU FRI SAT' },
] as const;

interface Cron {
  minutes: number[];
  hours: number[];
  days: Set<number>;
  months: Set<number>;
  weekdays: Set<number>;
  /** Both day fields restricted (neither starts with `*`): a day matches when either does (cron). */
  dayOr: boolean;
}

/** Parses a five-field cron expression as GitHub reads it (UTC, names, ranges, steps, lists). */
export function parseCron(expression: string): Cron {
  const parts = expression.trim().split(/\s+/);
  if (parts.length !== 5) {
    throw new ConfigError(`cron "${expression}": expected 5 fields (minute hour day month weekday)`);
  }
  const sets = parts.map((p, i) => field(p, FIELDS[i]!, expression));
  const weekdays = new Set([...sets[4]!].map((d) => d % 7));
  return {
    minutes: [...sets[0]!].sort((a, b) => a - b),
    hours: [...sets[1]!].sort((a, b) => a - b),
    days: sets[2]!,
    months: sets[3]!,
    weekdays,
    dayOr: !parts[2]!.startsWith('*') && !parts[4]!.startsWith('*'),
  };
}

function field(text: string, f: (typeof FIELDS)[number], expression: string): Set<number> {
  const out = new Set<number>();
  const names = 'names' in f ? f.names.split(' ') : [];
  const value = (s: string) => {
    const i = names.indexOf(s.toUpperCase());
    const n = i >= 0 ? i + (f.min === 1 ? 1 : 0) : /^\d+$/.test(s) ? Number(s) : NaN;
    if (!(n >= f.min && n <= f.max)) {
      throw new ConfigError(`cron "${expression}": ${f.name} "${s}" is not in ${f.min}–${f.max}`);
    }
    return n;
  };
  for (const item of text.split(',')) {
    const [range, stepText] = item.split('/');
    const step = stepText === undefined ? 1 : Number(stepText);
    if (!Number.isInteger(step) || step < 1) {
      throw new ConfigError(`cron "${expression}": ${f.name} step "${stepText}" is not a whole number ≥ 1`);
    }
    let lo: number;
    let hi: number;
    if (range === '*') [lo, hi] = [f.min, f.max];
    else if (range!.includes('-')) [lo, hi] = range!.split('-').map(value) as [number, number];
    else [lo, hi] = [value(range!), stepText === undefined ? value(range!) : f.max];
    if (lo > hi) throw new ConfigError(`cron "${expression}": ${f.name} range "${range}" runs backwards`);
    for (let v = lo; v <= hi; v += step) out.add(v);
  }
  return out;
}

const DAY = 86_400_000;

/**
 * The longest gap in seconds between two consecutive runs of the union of `crons`, over a year
 * (so monthly and weekday schedules are measured too). Undefined for no cron.
 */
export function scheduleIntervalSeconds(
  crons: readonly string[],
  from = Date.UTC(2026, 0, 1),
): number | undefined {
  if (crons.length === 0) return undefined;
  const parsed = crons.map(parseCron);
  const times: number[] = [];
  for (let day = 0; day < 400; day++) {
    const t = new Date(from + day * DAY);
    for (const c of parsed) {
      if (!c.months.has(t.getUTCMonth() + 1)) continue;
      const dom = c.days.has(t.getUTCDate());
      const dow = c.weekdays.has(t.getUTCDay());
      if (!(c.dayOr ? dom || dow : dom && dow)) continue;
      for (const h of c.hours) for (const m of c.minutes) times.push(t.getTime() + (h * 60 + m) * 60_000);
    }
  }
  if (times.length < 2) return 400 * 86_400; // at most once a year: no useful interval
  times.sort((a, b) => a - b);
  let gap = 0;
  for (let i = 1; i < times.length; i++) gap = Math.max(gap, times[i]! - times[i - 1]!);
  return gap / 1000;
}

/** Two intervals (a roster job may wait for the next run) plus 30 minutes of schedule delay. */
export function heartbeatTtlForInterval(intervalSeconds: number): number {
  return 2 * intervalSeconds + 1800;
}

export interface WorkflowSchedule {
  crons: string[];
  /** Where the crons were read: the workflow file, or the event of a scheduled run. */
  source: string;
}

/**
 * The schedule of the workflow this Actions run belongs to: the `on.schedule` of the workflow file
 * named by GITHUB_WORKFLOW_REF (for a reusable workflow, the caller's file) in the checked-out
 * workspace, else the cron of the `schedule` event that started the run. Undefined outside Actions
 * or when neither is readable (a workflow without a schedule).
 */
export function actionsSchedule(ctx: RunContext): WorkflowSchedule | undefined {
  if (!ctx.actions) return undefined;
  const fromFile = workflowFileCrons(ctx);
  if (fromFile) return fromFile;
  if (ctx.run?.event === 'schedule' && ctx.run.eventPath) {
    try {
      const event = JSON.parse(readFileSync(ctx.run.eventPath, 'utf8')) as { schedule?: unknown };
      if (typeof event.schedule === 'string')
        return { crons: [event.schedule], source: 'the schedule event' };
    } catch {
      /* unreadable event: no schedule known */
    }
  }
  return undefined;
}

function workflowFileCrons(ctx: RunContext): WorkflowSchedule | undefined {
  const ref = ctx.run?.workflowRef ?? '';
  const repo = ctx.repository ?? '';
  const workspace = ctx.workspace;
  const m = /^([^@]+)@/.exec(ref);
  if (!m || !repo || !m[1]!.startsWith(`${repo}/`) || !workspace) return undefined;
  const path = m[1]!.slice(repo.length + 1);
  if (!/^\.github\/workflows\/[\w.-]+\.ya?ml$/.test(path)) return undefined;
  try {
    const wf = parseYaml(readFileSync(join(workspace, path), 'utf8')) as {
      on?: { schedule?: { cron?: unknown }[] };
    };
    const crons = (Array.isArray(wf?.on?.schedule) ? wf.on.schedule : [])
      .map((s) => s?.cron)
      .filter((c): c is string => typeof c === 'string');
    return crons.length ? { crons, source: path } : undefined;
  } catch {
    return undefined;
  }
}
