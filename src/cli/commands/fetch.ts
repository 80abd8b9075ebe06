import { resolveConfig } from '../../config/load.js';
import { fetchCurriculum, type CurriculumSource } from '../../curriculum/fetch.js';
import { parseRepository } from '../../config/repository.js';
import { headline, textTable } from '../../curriculum/summary.js';
import { ConfigError } from '../../errors.js';
import { createGitHubClient } from '../../github/client.js';
import { githubSource } from '../../github/issues-source.js';
import { consoleLogger } from '../../log.js';
import { registerSecret } from '../../security/redact.js';
import { StateLayout } from '../../state/layout.js';
import { parse } from '../args.js';
import type { Command } from '../commands.js';

const HELP = `Usage: school fetch --repo OWNER/NAME [options]     (token from GITHUB_TOKEN)
       school fetch --issues-file FILE [options]    (offline: JSON array of GitHub issues)

Lists open issues, sanitizes and classifies them, and writes curriculum.jsonl into the state dir.

Options:
  --repo OWNER/NAME     repository to list (default: config "repository", then GITHUB_REPOSITORY)
  --issues-file FILE    offline source instead of the API
  --labels a,b          only issues with all of these labels (default: config curriculum.labels)
  --config FILE         school.yml (default: ./school.yml when present)
  --state-dir DIR       state directory (default: config stateDir, .school/state)
  --json                print the counts as JSON instead of a table
  --verbose             debug output
`;

export const fetchCommand: Command = {
  summary: 'fetch --repo OWNER/NAME | --issues-file FILE: build the curriculum from open issues',
  async run(argv) {
    const { values } = parse('fetch', argv, {
      repo: { type: 'string' },
      'issues-file': { type: 'string' },
      labels: { type: 'string' },
      config: { type: 'string' },
      'state-dir': { type: 'string' },
      json: { type: 'boolean' },
      verbose: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    });
    if (values.help) {
      process.stdout.write(HELP);
      return 0;
    }
    const config = resolveConfig(values.config, values['state-dir'] ? { stateDir: values['state-dir'] } : {});
    const logger = consoleLogger({ debug: values.verbose === true });
    const issuesFile = values['issues-file'] ?? (values.repo ? undefined : config.curriculum.issuesFile);
    let source: CurriculumSource;
    if (issuesFile) {
      if (values.repo) throw new ConfigError('school fetch: give --repo or --issues-file, not both.');
      source = { kind: 'file', path: issuesFile };
    } else {
      const repoArg = values.repo ?? config.repository ?? process.env.GITHUB_REPOSITORY;
      if (!repoArg) {
        throw new ConfigError(
          'school fetch: say where the issues come from: --repo OWNER/NAME (GitHub) or --issues-file FILE (offline).',
        );
      }
      const repo = parseRepository(repoArg, '--repo');
      const token = process.env.GITHUB_TOKEN || undefined;
      if (!token) {
        throw new ConfigError(
          'school fetch: GITHUB_TOKEN is not set. Export a token that can read issues (`gh auth token` prints one; a fine-grained token needs Issues: Read), or use --issues-file FILE.',
        );
      }
      registerSecret(token);
      source = githubSource(createGitHubClient({ token, logger }), repo);
    }
    const labels = values.labels
      ?.split(',')
      .map((l) => l.trim())
      .filter(Boolean);
    const result = await fetchCurriculum({
      layout: new StateLayout(config.stateDir),
      config,
      source,
      labels,
      logger,
    });
    if (values.json) {
      const { items: _items, ...counts } = result;
      process.stdout.write(JSON.stringify(counts) + '\n');
    } else {
      process.stdout.write(textTable(result.items));
      process.stdout.write(`${headline(result)}\nWrote ${result.path}\n`);
    }
    return 0;
  },
};
