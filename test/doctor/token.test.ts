import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { checkDeliveryToken } from '../../src/doctor/token.js';

/**
 * The delivery token's workflow scope, as GitHub reports it: the `x-oauth-scopes` header of an API
 * answer for a classic token, nothing for fine-grained and installation tokens (msw answers as
 * api.github.com does; the token is read only from the Authorization header).
 */
const API = 'https://api.github.test';
const SCOPES: Record<string, string> = {
  ghp_withworkflow0000000000000000000000: 'repo, workflow',
  ghp_repoonly000000000000000000000000000: 'repo, read:org',
};
const seen: string[] = [];
const server = setupServer(
  http.get(`${API}/user`, ({ request }) => {
    const token = (request.headers.get('authorization') ?? '').replace(/^Bearer /, '');
    seen.push(token);
    const scopes = SCOPES[token];
    if (scopes === undefined) return HttpResponse.json({ message: 'Bad credentials' }, { status: 401 });
    return HttpResponse.json({ login: 'bot' }, { headers: { 'x-oauth-scopes': scopes } });
  }),
);
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

const check = (token: string | undefined) => checkDeliveryToken({ token, apiUrl: API });

describe('doctor: may the delivery token write workflows?', () => {
  it('warns about a classic token with the workflow scope, and passes one without', async () => {
    const bad = await check('ghp_withworkflow0000000000000000000000');
    expect(bad).toMatchObject({ check: 'delivery-token', status: 'warning' });
    expect(bad.detail).toContain('workflow scope');
    expect(bad.fix).toMatch(/without the workflow scope/);
    const good = await check('ghp_repoonly000000000000000000000000000');
    expect(good).toMatchObject({ status: 'ok' });
    expect(good.detail).toContain('repo, read:org');
    // The token never appears in what the doctor prints.
    for (const f of [bad, good]) expect(JSON.stringify(f)).not.toContain('ghp_');
  });

  it('says a fine-grained or installation token cannot be inspected, and asks GitHub nothing', async () => {
    seen.length = 0;
    const fine = await check('github_pat_11AAAA_0000000000000000000000');
    expect(fine).toMatchObject({ status: 'skipped' });
    expect(fine.detail).toMatch(/cannot be checked.*Workflows/);
    const app = await check('ghs_installation000000000000000000000');
    expect(app).toMatchObject({ status: 'skipped' });
    expect(app.detail).toMatch(/GITHUB_TOKEN never pushes workflow files/);
    expect(seen).toEqual([]);
  });

  it('without a token says what it did not check; a refused token is a warning, not ok', async () => {
    expect(await check(undefined)).toMatchObject({
      status: 'skipped',
      detail: expect.stringMatching(/not checked/),
    });
    const refused = await check('ghp_revoked0000000000000000000000000000');
    expect(refused).toMatchObject({ status: 'warning', detail: expect.stringContaining('401') });
  });
});
