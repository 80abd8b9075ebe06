import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkRef, parseRef } from '../../src/cli/toolkit-ref.js';

/**
 * `school init` pins the loop to a ref of the toolkit that exists: GitHub is asked
 * (`GET /repos/{owner}/{repo}/commits/{ref}`, answered here as GitHub answers it), a ref it does
 * not know is refused with what to pass instead, and without a token the pin says it was not checked.
 */
const API = 'https://api.github.com';
const known = new Set(['main', 'v1.2.0', 'a'.repeat(40)]);
let calls = 0;
const server = setupServer(
  http.get(`${API}/repos/school-core/school-core/commits/:ref`, ({ params, request }) => {
    calls++;
    if (request.headers.get('authorization') !== 'Bearer t0ken')
      return HttpResponse.json({ message: 'Bad credentials' }, { status: 401 });
    const ref = String(params.ref);
    if (known.has(ref)) return HttpResponse.json({ sha: 'a'.repeat(40) });
    // GitHub: 422 "No commit found for SHA: …" for a name that is no ref, 404 for a missing repository.
    return HttpResponse.json({ message: `No commit found for SHA: ${ref}` }, { status: 422 });
  }),
  http.get(`${API}/repos/nobody/missing/commits/:ref`, () =>
    HttpResponse.json({ message: 'Not Found' }, { status: 404 }),
  ),
);
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterAll(() => server.close());

describe('the ref init pins the loop to', () => {
  it('exists: a tag, a branch or a commit', async () => {
    for (const ref of ['main', 'v1.2.0', 'a'.repeat(40)])
      expect(await checkRef({ toolkit: 'school-core/school-core', ref, token: 't0ken', fetch })).toEqual({
        checked: true,
      });
  });

  it('is refused when GitHub does not know it, with what to pass instead', async () => {
    await expect(
      checkRef({ toolkit: 'school-core/school-core', ref: 'v0.1.0', token: 't0ken', fetch }),
    ).rejects.toThrow(/school-core\/school-core has no v0\.1\.0 \(GitHub answered 422\).*--ref main/);
    await expect(checkRef({ toolkit: 'nobody/missing', ref: 'v1', token: 't0ken', fetch })).rejects.toThrow(
      /answered 404.*--toolkit/,
    );
  });

  it('is said to be unchecked without a token or when GitHub cannot say, never guessed', async () => {
    const before = calls;
    expect(await checkRef({ toolkit: 'school-core/school-core', ref: 'v9.9.9' })).toEqual({
      checked: false,
      why: 'no GITHUB_TOKEN to ask GitHub with',
    });
    expect(calls).toBe(before);
    expect(
      await checkRef({ toolkit: 'school-core/school-core', ref: 'main', token: 'wrong', fetch }),
    ).toEqual({
      checked: false,
      why: 'GitHub answered 401',
    });
  });

  it('is a tag, branch or SHA, nothing YAML or an expression could be made of', () => {
    for (const ok of ['main', 'v1', 'release/1.x', 'a'.repeat(40)]) expect(parseRef(ok)).toBe(ok);
    for (const bad of ['', 'a b', '${{ github.token }}', 'x..y', '/main', 'main/', "v1'\n"])
      expect(() => parseRef(bad), bad).toThrow(/--ref: .* is not a tag, branch or commit SHA/s);
  });
});
