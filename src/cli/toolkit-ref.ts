import { ConfigError } from '../errors.js';

/**
 * The ref `school init` pins the loop to (`uses: <toolkit>/…/school-loop.yml@<ref>` and
 * `toolkit-ref`). A caller pinned to a ref that does not exist fails on its first run with
 * GitHub's "unable to find reusable workflow", far from the command that wrote it: so the ref is
 * checked where it can be (a token to ask GitHub with), and said plainly where it cannot.
 */

/** A tag, a branch or a commit SHA: what `uses: …@<ref>` takes, nothing a YAML value or an expression could be made of. */
const REF = /^(?!.*\.\.)(?!\/)(?!.*\/$)[A-Za-z0-9][A-Za-z0-9._/-]{0,99}$/;

export function parseRef(ref: string): string {
  if (!REF.test(ref))
    throw new ConfigError(
      `--ref: "${ref.slice(0, 60)}" is not a tag, branch or commit SHA (letters, digits, dots, dashes, underscores and slashes), e.g. --ref v1.2.0 or --ref main`,
    );
  return ref;
}

export type RefCheck = { checked: true } | { checked: false; why: string };

/**
 * Asks GitHub whether `toolkit` has `ref` (`GET /repos/{toolkit}/commits/{ref}`: a tag, branch or
 * SHA). Absent (404, or 422 for a name that is no commit) is a configuration error naming what to
 * pass instead; without a token, or when GitHub cannot be asked, the answer is "not checked" with
 * the reason, never a guess.
 */
export async function checkRef(o: {
  toolkit: string;
  ref: string;
  token?: string | undefined;
  apiUrl?: string | undefined;
  fetch?: typeof fetch;
}): Promise<RefCheck> {
  if (!o.token) return { checked: false, why: 'no GITHUB_TOKEN to ask GitHub with' };
  const api = (o.apiUrl || 'https://api.github.com').replace(/\/+$/, '');
  const url = `${api}/repos/${o.toolkit}/commits/${encodeURIComponent(o.ref)}`;
  let status: number;
  try {
    const r = await (o.fetch ?? fetch)(url, {
      headers: {
        accept: 'application/vnd.github+json',
        authorization: `Bearer ${o.token}`,
        'x-github-api-version': '2022-11-28',
      },
      signal: AbortSignal.timeout(10_000),
    });
    status = r.status;
  } catch (e) {
    return { checked: false, why: `GitHub could not be asked (${(e as Error).message})` };
  }
  if (status === 200) return { checked: true };
  if (status === 404 || status === 422)
    throw new ConfigError(
      `school init: ${o.toolkit} has no ${o.ref} (GitHub answered ${status}); the caller workflow would fail on its first run. ` +
        `Pass --ref with a release tag, branch or commit of ${o.toolkit} that exists (for example --ref main until a release is tagged), ` +
        'or --toolkit with the repository that holds it.',
    );
  return { checked: false, why: `GitHub answered ${status}` };
}
