import { resolveConfig } from '../config/load.js';
import type { SchoolConfig } from '../config/schema.js';
import { fetchCurriculum, type CurriculumSource, type FetchResult } from '../curriculum/fetch.js';
import { parseRepository } from '../config/repository.js';
import { ConfigError } from '../errors.js';
import { createGitHubClient } from '../github/client.js';
import { githubSource } from '../github/issues-source.js';
import type { Logger } from '../log.js';
import { StateLayout } from '../state/layout.js';
import { auditActor, LOCAL_RUN, type RunContext } from '../process/run-context.js';
import { runStages } from './stages.js';

/** What fetch-curriculum's job needs, parsed (src/actions/fetch-curriculum/inputs.ts). */
export interface FetchJobInput {
  token?: string;
  /** owner/name; the action passes GITHUB_REPOSITORY when the input is empty. */
  repository?: string;
  labels?: string[];
  config?: string;
  stateDir?: string;
  /** An offline source (a JSON array of GitHub issues) instead of the API. */
  issuesFile?: string;
}

export interface FetchJob {
  config: SchoolConfig;
  layout: StateLayout;
  result: FetchResult;
}

/**
 * The job fetch-curriculum does, without the runner: pick the source (the issues file when one is
 * given, else the repository's issues through the API) and fetch the curriculum into the state.
 */
/** Fetches the curriculum in `context` (the run that writes the audit lines: src/process/run-context.ts). */
export async function fetchJob(
  inputs: FetchJobInput,
  logger: Logger,
  context: RunContext = LOCAL_RUN,
): Promise<FetchJob> {
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
    const repo = parseRepository(inputs.repository ?? config.repository, 'repository');
    source = githubSource(createGitHubClient({ token: inputs.token, logger }), repo);
  }
  const layout = new StateLayout(config.stateDir, auditActor(context));
  let result!: FetchResult;
  await runStages('fetch-curriculum', {
    fetch: async () => {
      result = await logger.group('Fetch the curriculum', () =>
        fetchCurriculum({ layout, config, source, labels: inputs.labels, logger }),
      );
    },
  });
  return { config, layout, result };
}
