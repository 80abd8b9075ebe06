import { existsSync, readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import type { SchoolConfig } from '../../config/schema.js';
import { message } from '../../errors.js';
import { heartbeatTtlForInterval, scheduleIntervalSeconds, type WorkflowSchedule } from './schedule.js';

/**
 * Settings the plan takes from the GitHub Actions run rather than from school.yml alone: the roster
 * heartbeat TTL (from the workflow's schedule, when school.yml sets none) and the crew job's time
 * limit (the workflow's `timeout-minutes`, one source of truth with admission).
 */

export interface TtlChoice {
  config: SchoolConfig;
  /** Where the TTL came from, for the summary; undefined when school.yml set it. */
  note?: string;
  /** A schedule that could not be read, for a warning. */
  problem?: string;
}

/**
 * fleet.heartbeatTtlSeconds from the schedule when school.yml leaves it unset and this is an Actions
 * run of a scheduled workflow. Otherwise the config as it is (the default applies later).
 */
export function ttlFromSchedule(config: SchoolConfig, schedule: WorkflowSchedule | undefined): TtlChoice {
  if (config.fleet.heartbeatTtlSeconds !== undefined) return { config };
  const found = schedule;
  if (!found) return { config };
  let interval: number | undefined;
  try {
    interval = scheduleIntervalSeconds(found.crons);
  } catch (e) {
    return { config, problem: `the schedule in ${found.source} is not readable: ${message(e)}` };
  }
  if (interval === undefined) return { config };
  const ttl = heartbeatTtlForInterval(interval);
  return {
    config: { ...config, fleet: { ...config.fleet, heartbeatTtlSeconds: ttl } },
    note: `Heartbeat TTL ${ttl} s: twice the longest interval of the schedule (${found.crons.join(', ')} in ${found.source}: ${interval} s) plus 30 minutes; set fleet.heartbeatTtlSeconds to choose another.`,
  };
}

/**
 * dispatch.jobTimeoutMinutes as school.yml writes it (undefined when it does not), to tell the user
 * that the workflow's crew job limit overrides a different value there.
 */
export function configuredJobTimeout(configPath: string | undefined): number | undefined {
  const path = configPath ?? (existsSync('school.yml') ? 'school.yml' : undefined);
  if (!path) return undefined;
  try {
    const raw = parseYaml(readFileSync(path, 'utf8')) as {
      dispatch?: { jobTimeoutMinutes?: unknown };
    } | null;
    const v = raw?.dispatch?.jobTimeoutMinutes;
    return typeof v === 'number' ? v : undefined;
  } catch {
    return undefined; // the config loader reports an unreadable file
  }
}

export function jobTimeoutNote(configured: number | undefined, fromWorkflow: number): string | undefined {
  if (configured === undefined || configured === fromWorkflow) return undefined;
  return `dispatch.jobTimeoutMinutes is ${configured} in school.yml, but the crew job's timeout-minutes is ${fromWorkflow}: the plan admits work for ${fromWorkflow} minutes. Remove the setting or make the two equal.`;
}
