import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { redact, redactPatterns, redactText, registerSecret, REDACTED } from '../../src/security/redact.js';

/** Token formats from docs/architecture.md, each as it appears in the wild (shapes, not live values). */
const a36 = 'aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5';
const CORPUS: Record<string, string> = {
  'GitHub classic PAT': `ghp_${a36}`,
  'GitHub OAuth': `gho_${a36}`,
  'GitHub user-to-server': `ghu_${a36}`,
  'GitHub server-to-server': `ghs_${a36}`,
  'GitHub refresh': `ghr_${a36}`,
  'GitHub fine-grained PAT': `github_pat_11ABCDEFG0123456789abc_${a36}${a36}xyz12`,
  'AWS access key id': 'AKIAIOSFODNN7EXAMPLE',
  'Slack bot token': 'xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx',
  'Slack user token': 'xoxp-123456789012-1234567890123-1234567890123-abcdef0123456789abcdef0123456789',
  'Anthropic key': 'sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_AbCdEfGhIjKlMnOpQrStUvWx-AAAA',
  'OpenAI key': 'sk-AbCdEfGhIjKlMnOpQrStT3BlbkFJAbCdEfGhIjKlMnOpQrSt',
  'OpenAI project key': 'sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_AbCdEfGhIjKlMnOp',
  JWT: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c',
  'PEM RSA private key':
    '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgwMbRvI0MBZhpF\nq1dmBtH2B3JfYAkA0Z3VS5JJcds3xfn==\n-----END RSA PRIVATE KEY-----',
  'PEM OpenSSH private key':
    '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----',
  'Slack webhook': 'https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX',
  'URL with credentials': 'https://deploy:s3cr3tpassw0rd@git.example.com/repo.git',
  'Bearer header': 'Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123456789',
  'password assignment': 'DB_PASSWORD=correct-horse-battery',
};

describe('redactText corpus', () => {
  for (const [name, secret] of Object.entries(CORPUS)) {
    it(`redacts a ${name} inside text`, () => {
      const text = `before ${secret} after`;
      const out = redactText(text);
      expect(out).toContain(REDACTED);
      expect(out.startsWith('before ')).toBe(true);
      // The secret-bearing part is gone: its longest alphanumeric run does not survive.
      const run = [...secret.matchAll(/[A-Za-z0-9]{8,}/g)]
        .map((m) => m[0])
        .filter((r) => !/^(?:PRIVATE|OPENSSH|Authorization|PASSWORD|services|Bearer)$/.test(r))
        .sort((x, y) => y.length - x.length)[0]!;
      expect(out, name).not.toContain(run);
    });
  }

  it('leaves ordinary text alone: hashes, UUIDs, words near "token", short sk- words', () => {
    const text =
      'commit 3f786850e387550fdab836ed7e6dc881de23001b, run 123e4567-e89b-12d3-a456-426614174000, ' +
      'the tokenizer, sk-learn, task-ant, issue #42, crew c-7, AKIA alone';
    expect(redactText(text)).toBe(text);
  });

  it('a registered exact secret is redacted wherever it appears', () => {
    registerSecret('plain-looking-value-93');
    expect(redactText('x plain-looking-value-93 y')).toBe(`x ${REDACTED} y`);
    registerSecret('abc'); // too short to register: would shred ordinary text
    expect(redactText('abc')).toBe('abc');
  });

  it('the fast prefilter never changes the result (property)', () => {
    const pieces = Object.values(CORPUS).flatMap((v) => [
      v,
      v.slice(0, 10),
      v.toLowerCase(),
      v.toUpperCase(),
    ]);
    const text = fc
      .array(
        fc.oneof(
          fc.constantFrom(...pieces, 'token=', 'Secret: ', '://', ' ', '\n', 'İ', 'ſ', 'K'),
          fc.string({ maxLength: 12 }),
        ),
        {
          maxLength: 12,
        },
      )
      .map((parts) => parts.join(''));
    fc.assert(
      fc.property(text, (t) => {
        expect(redactText(t)).toBe(redactPatterns(t));
      }),
      { numRuns: 3000 },
    );
  });

  it('is idempotent', () => {
    const once = redactText(Object.values(CORPUS).join('\n'));
    expect(redactText(once)).toBe(once);
  });
});

describe('structural redact', () => {
  it('redacts sensitive keys and token-shaped values; identity fields survive untouched', () => {
    const identity = {
      key: 'grade:42:crew-7',
      type: 'job.failed',
      issue_number: 42,
      crew_id: 'crew-7',
      status: 'dead_letter',
      attempts: 3,
    };
    const record = {
      ...identity,
      data: {
        password: 'hunter2hunter2',
        apiKey: 'whatever-it-is',
        client_secret: 'cs',
        Authorization: 'token abc',
        headers: [{ cookie: 'session=1' }],
        log: `pushed with ${CORPUS['GitHub classic PAT']}`,
        empty_token: '',
        nested: { deeper: { aws_secret_access_key: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' } },
      },
    };
    const out = redact(record);
    expect(out).toMatchObject(identity);
    expect(out.data.password).toBe(REDACTED);
    expect(out.data.apiKey).toBe(REDACTED);
    expect(out.data.client_secret).toBe(REDACTED);
    expect(out.data.Authorization).toBe(REDACTED);
    expect(out.data.headers[0]!.cookie).toBe(REDACTED);
    expect(out.data.log).toBe(`pushed with ${REDACTED}`);
    expect(out.data.empty_token).toBe('');
    expect(out.data.nested.deeper.aws_secret_access_key).toBe(REDACTED);
    // The input is not mutated.
    expect(record.data.password).toBe('hunter2hunter2');
  });

  it('keeps numbers, booleans, null and dates as they are', () => {
    const at = new Date('2026-01-01T00:00:00Z');
    expect(redact({ n: 1, b: true, z: null, at, list: [1, 'x'] })).toEqual({
      n: 1,
      b: true,
      z: null,
      at,
      list: [1, 'x'],
    });
  });
});
