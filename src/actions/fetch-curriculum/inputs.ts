import { z } from 'zod';
import { optionalInput, secretInput } from '../../github/runtime.js';
import type { FetchJobInput } from '../../loop/fetch-job.js';

/** Every input, parsed once (CONTRIBUTING.md). `core.getInput` gives '' for absent: optionalInput maps it. */
const inputsSchema = z.object({
  token: z.string().optional(),
  repository: z.string().optional(),
  labels: z.array(z.string()).optional(),
  config: z.string().optional(),
  stateDir: z.string().optional(),
  issuesFile: z.string().optional(),
});

/** fetch-curriculum's inputs as the runner gives them, parsed once. */
export function readInputs(): FetchJobInput {
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
