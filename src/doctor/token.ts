import type { Finding } from './finding.js';

/**
 * Whether the delivery token may write workflow files (docs/security.md). A workflow pushed on a
 * branch of the repository runs on push with the repository's secrets before anyone reviews it, so
 * the token that pushes accepted work should be one GitHub refuses such pushes from. The delivery
 * and the policy judge refuse `.github/**` already; this is the check outside the school's code.
 *
 * What GitHub lets us see, by token kind:
 * - a classic personal access token (`ghp_`) or OAuth token (`gho_`, `ghu_`): its scopes, in the
 *   `x-oauth-scopes` header of any API answer — `workflow` there is a warning;
 * - a fine-grained personal access token (`github_pat_`): nothing — GitHub does not report its
 *   permissions, so the doctor says so and what to check by hand;
 * - an installation token (`ghs_`: a GitHub App's, or the workflow's GITHUB_TOKEN): the App's
 *   permissions are not visible to the token either; GITHUB_TOKEN can never push workflow files.
 */
export async function checkDeliveryToken(o: {
  token: string | undefined;
  /** GITHUB_API_URL; default https://api.github.com. */
  apiUrl?: string | undefined;
  fetch?: typeof fetch;
  timeoutMs?: number;
}): Promise<Finding> {
  const check = 'delivery-token';
  const token = o.token?.trim();
  if (!token)
    return {
      check,
      status: 'skipped',
      detail:
        'no SCHOOL_DELIVERY_TOKEN in this environment: what the delivery token may write is not checked here (it must not be allowed to write workflows)',
    };
  if (token.startsWith('github_pat_'))
    return {
      check,
      status: 'skipped',
      detail:
        'a fine-grained personal access token: GitHub does not tell what it may write, so it cannot be checked. Make sure its "Workflows" permission is not "Read and write" (contents and pull requests read and write are all delivery needs)',
    };
  if (token.startsWith('ghs_'))
    return {
      check,
      status: 'skipped',
      detail:
        'an installation token (a GitHub App, or the workflow\'s GITHUB_TOKEN): its permissions cannot be read with it. GITHUB_TOKEN never pushes workflow files; a GitHub App must not have the "Workflows" permission',
    };
  const url = `${(o.apiUrl ?? 'https://api.github.com').replace(/\/+$/, '')}/user`;
  let scopes: string | null;
  try {
    const r = await (o.fetch ?? fetch)(url, {
      headers: { authorization: `Bearer ${token}`, accept: 'application/vnd.github+json' },
      signal: AbortSignal.timeout(o.timeoutMs ?? 10_000),
    });
    if (!r.ok)
      return {
        check,
        status: 'warning',
        detail: `GitHub answered ${r.status} to the delivery token at ${url}: its scopes are unknown`,
        fix: 'check that SCHOOL_DELIVERY_TOKEN is a valid token for this GitHub, and that it has no workflow scope',
      };
    scopes = r.headers.get('x-oauth-scopes');
  } catch (e) {
    return {
      check,
      status: 'warning',
      detail: `could not ask ${url} about the delivery token (${e instanceof Error ? e.message : String(e)}): its scopes are unknown`,
      fix: 'run the doctor where GitHub is reachable, or check by hand that the token has no workflow scope',
    };
  }
  if (scopes === null)
    return {
      check,
      status: 'skipped',
      detail:
        'GitHub reported no scopes for the delivery token (not a classic token): make sure it may not write workflows',
    };
  const list = scopes
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (list.includes('workflow'))
    return {
      check,
      status: 'warning',
      detail: `the delivery token has the workflow scope (${list.join(', ')}): a workflow file in a pushed branch would run with the repository's secrets before anyone reviews it`,
      fix: 'use a token without the workflow scope (repo is enough to push branches and open pull requests), or a fine-grained token without "Workflows: write"',
    };
  return {
    check,
    status: 'ok',
    detail: `classic token scopes: ${list.join(', ') || 'none'}; no workflow scope, so GitHub refuses its pushes of workflow files`,
  };
}
