import { describe, expect, it } from 'vitest';
import { registerSecret } from '../../src/security/redact.js';
import {
  entropy,
  holdsCredential,
  refuseSecrets,
  scanPatch,
  SecretInPatchError,
} from '../../src/security/secret-scan.js';

/**
 * The secret scan of a patch: credentials in the lines a patch adds are found (file, line, kind),
 * and code that merely names a token, a secret or a password is not.
 */

/** A patch adding `lines` to a new file `path`, as `git diff` writes one. */
function added(path: string, lines: readonly string[]): string {
  return [
    `diff --git a/${path} b/${path}`,
    'new file mode 100644',
    'index 0000000..1111111',
    '--- /dev/null',
    `+++ b/${path}`,
    `@@ -0,0 +1,${lines.length} @@`,
    ...lines.map((l) => `+${l}`),
    '',
  ].join('\n');
}

// Real-shaped values, built so that no credential-shaped literal sits in this file.
const GHP = 'ghp_' + 'Zq8xT2vLm9Rk4Wb7Yc1Nd6Hf3Jg5Ps0Ea8Ux';
const PAT = 'github_pat_' + '11ABCDEFG0' + 'qW3eR5tY7uI9oP1aS3dF5gH7jK9lZ2xC4vB6nM8';
const ANT = 'sk-ant-' + 'api03-' + 'Xk29vLqP0sTz81MwYb4RcN6dHf3Jg5Qe7Ua2Io';
const OAI = 'sk-proj-' + 'T3BlbkFJ9xQ2mVn7Lp4Rk8Ws1Yz6Cd0Ef5Gh';
const AWS = 'AKIA' + 'Q3Z7X2LM9PR4TW6Y';
const GOOGLE = 'AIza' + 'SyD8x3Lq0Vn6Rk2Mw9Yb4Tc7Pz1Hf5Jg3Qe';
const SLACK = 'xoxb-' + '2948173650-8172635490-Gk3Lm9Qp2Rs7Tv4Wx6Yz1A';
const RANDOM = 'q7Vx2Lm9Kp4Rz8Ws1Yb6Tc3Nd0Hf5JgEaUoIeXr';

describe('scanPatch: what is a secret', () => {
  it.each([
    ['a GitHub token', `export const DEPLOY = '${GHP}';`, 'a GitHub token'],
    ['a fine-grained GitHub token', `TOKEN = "${PAT}"`, 'a GitHub token'],
    ['an Anthropic key', `client = Anthropic(api_key="${ANT}")`, 'an Anthropic API key'],
    ['an OpenAI key', `const openai = new OpenAI({ apiKey: '${OAI}' });`, 'an OpenAI API key'],
    ['an AWS access key id', `aws_access_key_id = ${AWS}`, 'an AWS access key id'],
    ['a Google API key', `key: ${GOOGLE}`, 'a Google API key'],
    ['a Slack token', `SLACK = '${SLACK}'`, 'a Slack token'],
    [
      'a random secret assigned to a credential name (JS)',
      `const clientSecret = "${RANDOM}";`,
      'clientsecret',
    ],
    ['… (Python)', `API_KEY = '${RANDOM}'`, 'apikey'],
    ['… (Go)', `token := "${RANDOM}"`, 'token'],
    ['… (Ruby)', `config.secret_token = '${RANDOM}'`, 'secrettoken'],
    ['… (an env file)', `DB_PASSWORD=${RANDOM}`, 'dbpassword'],
    ['… (YAML)', `  password: ${RANDOM}`, 'password'],
  ])('%s', (_, line, kind) => {
    const f = scanPatch(added('src/config.txt', ['// before', line, '// after']));
    expect(f).toEqual([{ file: 'src/config.txt', line: 2, kind: expect.stringContaining(kind) }]);
  });

  it('a PEM private key: its header followed by key material', () => {
    const pem = [
      '-----BEGIN RSA PRIVATE KEY-----',
      'MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun',
      '-----END RSA PRIVATE KEY-----',
    ];
    expect(scanPatch(added('certs/key.pem', pem))).toEqual([
      { file: 'certs/key.pem', line: 1, kind: 'a PEM private key' },
    ]);
    const inline = `const KEY = "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7";`;
    expect(scanPatch(added('k.js', [inline]))).toHaveLength(1);
  });

  it('a secret the school registered; a short or plain registered value is no reason to refuse', () => {
    registerSecret('school-held-value-4711-abc');
    expect(scanPatch(added('a.txt', ['x = "school-held-value-4711-abc"']))).toEqual([
      { file: 'a.txt', line: 1, kind: 'a secret the school holds' },
    ]);
    // Every variable named like a key is registered, `DEPLOY_KEY=production` and URLs included.
    registerSecret('production');
    registerSecret('https://pipelines.example.test/_apis/token');
    expect(
      scanPatch(added('b.txt', ['env = "production"', 'url = "https://pipelines.example.test/_apis/token"'])),
    ).toEqual([]);
  });

  it('names lines in the new file through hunks of a modified file, never the value', () => {
    const patch = [
      'diff --git a/lib/auth.py b/lib/auth.py',
      'index 1234567..89abcde 100644',
      '--- a/lib/auth.py',
      '+++ b/lib/auth.py',
      '@@ -10,4 +10,5 @@ def login():',
      '     token = request.headers.get("token")',
      '-    old = 1',
      '+    new = 2',
      `+    DEPLOY = "${GHP}"`,
      '     return token',
      '     # end',
      '@@ -40,2 +41,3 @@ def other():',
      '     pass',
      `+    KEY = "${GHP}"`,
      '     pass',
      '',
    ].join('\n');
    const f = scanPatch(patch);
    expect(f).toEqual([
      { file: 'lib/auth.py', line: 12, kind: 'a GitHub token' },
      { file: 'lib/auth.py', line: 42, kind: 'a GitHub token' },
    ]);
    expect(() => refuseSecrets(patch)).toThrow(SecretInPatchError);
    try {
      refuseSecrets(patch);
    } catch (e) {
      expect((e as Error).message).toMatch(
        /^secret_in_patch: the change adds a GitHub token at lib\/auth.py line 12/,
      );
      expect((e as Error).message).not.toContain(GHP);
      expect((e as Error).message).not.toContain(GHP.slice(4, 20));
    }
  });

  it("a credential only in a context or removed line is not the change's", () => {
    const patch = [
      'diff --git a/a.js b/a.js',
      'index 1234567..89abcde 100644',
      '--- a/a.js',
      '+++ b/a.js',
      '@@ -1,3 +1,3 @@',
      ` const old = '${GHP}';`,
      `-const gone = '${GHP}';`,
      '+const gone = process.env.TOKEN;',
      ' // end',
      '',
    ].join('\n');
    expect(scanPatch(patch)).toEqual([]);
  });
});

describe('scanPatch: what is not a secret', () => {
  // Real code names tokens, secrets and passwords all the time: none of it is a credential.
  const code = [
    // JavaScript / TypeScript
    'const token = lexer.next();',
    'let secret = process.env.X;',
    'const password = form.get("password");',
    'headers.authorization = `Bearer ${token}`;',
    'const api_key = config.apiKey ?? "";',
    'export function verifyToken(token: string): boolean { return token.length > 0; }',
    'const tokenizer = new Tokenizer({ secret: opts.secret, password: undefined });',
    // Python
    'tidx, token = get_next_comment()',
    'password = getpass.getpass("password: ")',
    'api_key = os.environ["API_KEY"]',
    'self.authorization = "Basic " + base64.b64encode(creds).decode()',
    // Go
    'token := strings.TrimSpace(line)',
    'secret, err := client.GetSecret(ctx, name)',
    // Ruby
    '@token = SecureRandom.hex(32)',
    'password: params[:password],',
    // Hashes and digests are hex (at most 4 bits a character), not credentials.
    'checksum_token = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"',
    '"integrity": "sha512-Lmn2xq9X0FrT7KbYc3Wv6Ne1Pd8Hs4Jg5Ra0Uo2Ie7Zt3Qp9Ly6Mx1Cb4Va8Sd",',
    // Placeholders and documented examples.
    "const DEMO = 'ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx';",
    'aws_access_key_id = AKIAIOSFODNN7EXAMPLE',
    'password: "correct-horse-battery-staple-correct-horse"',
    "if (line === '-----BEGIN PRIVATE KEY-----') return parseKey(rest);",
    "const names = ['sk-learn-model-selection-tools-and-more'];",
    // A JSON Web Token in a test fixture.
    "const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U';",
  ];
  it.each(code)('%s', (line) => {
    expect(scanPatch(added('src/x', [line]))).toEqual([]);
  });

  it('entropy: hex is at most 4 bits a character, random base62 well above', () => {
    expect(entropy('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855')).toBeLessThanOrEqual(
      4,
    );
    expect(entropy(RANDOM)).toBeGreaterThan(4.5);
  });
});

describe('holdsCredential: the last guard where a patch is saved', () => {
  it('looks at every line, context and removed ones included; code that names tokens holds none', () => {
    expect(holdsCredential('plain text\nwith nothing in it\n')).toBe(false);
    expect(holdsCredential(' const token = lexer.next();\n-  password = form.get("password")\n')).toBe(false);
    expect(holdsCredential(` const old = '${GHP}';\n`)).toBe(true);
    expect(holdsCredential(`-${AWS}\n`)).toBe(true);
    expect(
      holdsCredential(
        '+-----BEGIN PRIVATE KEY-----\n+MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n',
      ),
    ).toBe(true);
  });
});
