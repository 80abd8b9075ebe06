import * as core from '@actions/core';
import { message } from '../errors.js';
import type { Logger } from '../log.js';
import { redactText, registerSecret } from '../security/redact.js';

/** A Logger backed by the runner: annotations for warnings and errors, collapsible groups. */
export function actionsLogger(): Logger {
  return {
    debug: (m) => core.debug(redactText(m)),
    info: (m) => core.info(redactText(m)),
    warning: (m) => core.warning(redactText(m)),
    error: (m) => core.error(redactText(m)),
    group: (name, fn) => core.group(redactText(name), fn),
  };
}

/** `core.getInput` returns '' for an absent input: this returns undefined instead. */
export function optionalInput(name: string): string | undefined {
  return core.getInput(name) || undefined;
}

/** Registers the token with the runner's log masking and with our redactor. */
export function secretInput(name: string): string | undefined {
  const value = core.getInput(name) || undefined;
  if (value) {
    core.setSecret(value);
    registerSecret(value);
  }
  return value;
}

/**
 * The one top-level error path of every action (CONTRIBUTING.md): run, and on any failure report it once
 * with setFailed. Unhandled rejections are routed to the same place.
 */
export async function runAction(main: () => Promise<void>): Promise<void> {
  let reported = false;
  const fail = (e: unknown) => {
    if (reported) return;
    reported = true;
    core.setFailed(redactText(message(e)));
  };
  process.on('unhandledRejection', fail);
  try {
    registerSecret(process.env.GITHUB_TOKEN);
    registerSecret(process.env.INPUT_TOKEN);
    await main();
  } catch (e) {
    fail(e);
  }
}

/** Writes the job summary when the runner provides one; `summary.write()` throws without it. */
export async function writeSummary(build: (s: typeof core.summary) => void, logger?: Logger): Promise<void> {
  if (!process.env.GITHUB_STEP_SUMMARY) return;
  try {
    build(core.summary);
    await core.summary.write();
  } catch (e) {
    logger?.warning(`could not write the job summary: ${message(e)}`);
  } finally {
    core.summary.emptyBuffer();
  }
}
