import * as core from '@actions/core';
import { hideCredentials } from '../github/credentials.js';
import { z } from 'zod';
import { resolveConfig } from '../config/load.js';
import { fetchCurriculum, type CurriculumSource } from '../curriculum/fetch.js';
import { parseRepo } from '../curriculum/github-source.js';
import { headline, SUMMARY_HEADER, summaryRows } from '../curriculum/summary.js';
import { ConfigError } from '../errors.js';
import { createGitHubClient } from '../github/client.js';
import { boardSummary } from './board-summary.js';
import { actionsLogger, optionalInput, runAction, secretInput, writeSummary } from '../github/runtime.js';
import { StateLayout } from '../state/layout.js';

/** Every input, parsed once (CONTRIBUTING.md). `core.getInput` gives '' for absent: optionalInput maps it. */
const inputsSchema = z.object({
  token: z.string().optional(),
  repository: z.string().optional(),
  labels: z.array(z.string()).optional(),
  config: z.string().optional(),
  stateDir: z.string().optional(),
  issuesFile: z.string().optional(),
});

export function parseInputs() {
  const labels = optionalInput('labels');
  return inputsSchema.parse({
    token: secretInput('token'),
    repository: optionalInput('repository') ?? process.env.GITHUB_REPOSITORY,
    labels: labels
      ?.split(/[,\n]/)
      .map((l) => l.trim())
      .filter(Boolean),
    config: optionalInput('config'),
    stateDir: optionalInput('state-dir'),
    issuesFile: optionalInput('issues-file'),
  });
}

export async function main(): Promise<void> {
  const inputs = parseInputs();
  // The token is in `inputs` now; children and /proc/<pid>/environ never see it again.
  hideCredentials();
  const logger = actionsLogger();
  const config = resolveConfig(inputs.config, inputs.stateDir ? { stateDir: inputs.stateDir } : {});
  const issuesFile = inputs.issuesFile ?? config.curriculum.issuesFile;
  let source: CurriculumSource;
  if (issuesFile) {
    source = { kind: 'file', path: issuesFile };
  } else {
    if (!inputs.token) {
      throw new ConfigError(
        'token: no GitHub token. Leave the `token` input at its default (${{ github.token }}) or pass a token with `issues: read`.',
      );
    }
    const repo = parseRepo(inputs.repository ?? config.repository, 'repository');
    source = { kind: 'github', client: createGitHubClient({ token: inputs.token, logger }), repo };
  }
  const layout = new StateLayout(config.stateDir);
  const result = await logger.group('Fetch the curriculum', () =>
    fetchCurriculum({ layout, config, source, labels: inputs.labels, logger }),
  );
  core.setOutput('count', result.count);
  core.setOutput('added', result.added);
  core.setOutput('changed', result.changed);
  core.setOutput('removed', result.removed);
  core.setOutput('curriculum-path', result.path);
  core.setOutput('mode', result.mode);
  core.info(headline(result));
  const board = boardSummary('fetch-curriculum', layout, config, logger);
  await writeSummary((s) => {
    s.addHeading('Curriculum', 2).addRaw(headline(result), true);
    if (result.items.length) {
      s.addTable([SUMMARY_HEADER.map((h) => ({ data: h, header: true })), ...summaryRows(result.items)]);
      if (result.items.length > 200) s.addRaw(`… and ${result.items.length - 200} more.`, true);
    }
    if (board) s.addRaw(board, true);
  }, logger);
}

void runAction(main);
