import { SchoolError } from '../errors.js';
import { holdsRegisteredSecret, TOKEN_FORMATS } from './redact.js';

/**
 * The secret scan of a patch (docs/security.md, "Secrets in a patch"). A patch is data: the
 * redactor never rewrites it (a rewritten patch no longer applies, or delivers `[REDACTED]` in
 * place of code). Instead the lines a patch ADDS are searched for credentials, and a patch holding
 * one is refused whole (`secret_in_patch`), naming the file, the line and the kind, never the value.
 *
 * What counts, conservatively (a refusal costs the student its work):
 * - the token formats the redactor knows (./redact.ts TOKEN_FORMATS: GitHub, Anthropic, OpenAI,
 *   AWS, Google, Slack), when the value after the prefix looks random (a placeholder such as
 *   `ghp_xxxx…` or AWS's documented `…EXAMPLE` key is not a credential);
 * - a PEM private key: its BEGIN line followed by key material (a parser that compares a line with
 *   the header text is not a key);
 * - a long (≥ 32 characters), high-entropy (≥ 4 bits a character: never hex, so no hash or lockfile
 *   digest) literal assigned to a credential-named key (`client_secret = "…"`, `apiKey: '…'`,
 *   `API_TOKEN=…`);
 * - any secret the school registered (an input, a key from the environment) that looks like one:
 *   16 characters or more, not a URL, not plain (entropy ≥ 3 bits a character).
 * An identifier called `token`, `secret`, `password`, `authorization` or `api_key` is not a secret:
 * only a value can be. JSON Web Tokens are not looked for (test fixtures are full of example ones);
 * binary files (`GIT binary patch`) are not decoded.
 */
export interface SecretFinding {
  /** The path the patch writes, as its `+++` line names it. */
  file: string;
  /** The line number in the new file. */
  line: number;
  /** What was found, in words (`a GitHub token`): never the value. */
  kind: string;
}

/** A change adds a credential: the crew is refused, the change is not kept. Names where, never what. */
export class SecretInPatchError extends SchoolError {
  override readonly code = 'secret_in_patch';
  constructor(readonly findings: readonly SecretFinding[]) {
    super(`secret_in_patch: ${describeSecrets(findings)}`);
    this.name = 'SecretInPatchError';
  }
}

/** One sentence naming each finding (the first five) by kind, file and line. */
export function describeSecrets(findings: readonly SecretFinding[]): string {
  const shown = findings.slice(0, 5).map((f) => `${f.kind} at ${f.file.slice(0, 200)} line ${f.line}`);
  const more = findings.length > 5 ? ` and ${findings.length - 5} more` : '';
  return `the change adds ${shown.join(', ')}${more}; a credential in a change is refused, never kept, delivered or shown`;
}

/** The most findings one scan reports. */
const MAX_FINDINGS = 50;

/** Every credential the lines `patch` adds hold, in patch order. */
export function scanPatch(patch: string): SecretFinding[] {
  const findings: SecretFinding[] = [];
  let file = '';
  let hunk: { oldLeft: number; newLeft: number; line: number } | undefined;
  // The line before, when it was an added PEM header: the key material must follow it.
  let pemAt: { file: string; line: number } | undefined;
  for (const raw of patch.split('\n')) {
    if (findings.length >= MAX_FINDINGS) break;
    if (hunk && (hunk.oldLeft > 0 || hunk.newLeft > 0)) {
      const mark = raw[0];
      if (mark === '\\') continue; // "\ No newline at end of file"
      if (mark === '+') {
        const text = raw.slice(1);
        if (pemAt && PEM_BODY.test(text)) findings.push({ ...pemAt, kind: PEM_KIND });
        pemAt = PEM_HEADER.test(text) ? { file, line: hunk.line } : undefined;
        const kind = PEM_INLINE.test(text) ? PEM_KIND : lineSecret(text);
        if (kind) findings.push({ file, line: hunk.line, kind });
        hunk.line++;
        hunk.newLeft--;
        continue;
      }
      pemAt = undefined;
      if (mark === '-') hunk.oldLeft--;
      else {
        hunk.oldLeft--;
        hunk.newLeft--;
        hunk.line++;
      }
      continue;
    }
    hunk = undefined;
    pemAt = undefined;
    if (raw.startsWith('diff --git ')) file = '';
    else if (raw.startsWith('+++ ')) file = newPath(raw.slice(4));
    else if (raw.startsWith('@@ ')) {
      const m = /^@@ -\d+(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/.exec(raw);
      if (m) hunk = { oldLeft: count(m[1]), newLeft: count(m[3]), line: Number(m[2]) };
    }
  }
  return dedupe(findings);
}

/**
 * Whether any line of `text` holds a credential the scan knows, whatever its place in a patch
 * (added, context or removed, or no patch at all): the last guard where a patch is saved.
 */
export function holdsCredential(text: string): boolean {
  // Every save of the state asks this of every stored patch: most hold none of the literals below.
  if (!MAY_HOLD.test(text) && !holdsRegisteredSecret(text, credentialLike)) return false;
  let pem = false;
  for (const raw of text.split('\n')) {
    const line = /^[+ -]/.test(raw) ? raw.slice(1) : raw;
    if ((pem && PEM_BODY.test(line)) || PEM_INLINE.test(line) || lineSecret(line)) return true;
    pem = PEM_HEADER.test(line);
  }
  return false;
}

/** Throws SecretInPatchError when `patch` adds a credential. */
export function refuseSecrets(patch: string): void {
  const findings = scanPatch(patch);
  if (findings.length) throw new SecretInPatchError(findings);
}

/** A literal every finding but a registered secret needs (a token prefix, a credential-named key). */
const MAY_HOLD =
  /gh[pousr]_|github_pat_|sk-|A(?:KI|SI|GP|ID|RO|NP)A|AIza|xox|hooks\.slack\.com|PRIVATE KEY|token|secret|passw|phrase|key|credential/i;

const PEM_KIND = 'a PEM private key';
const PEM_HEADER = /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/;
/** Key material: a line of base64 (a PEM body line is 64 characters). */
const PEM_BODY = /^[\s"'`]*[A-Za-z0-9+/]{40,}={0,2}[\s"'`,;\\n]*$/;
/** The header and key material on one line, as a string literal holds it (`"-----BEGIN…-----\nMIIE…"`). */
const PEM_INLINE = /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?:\\r)?\\n[A-Za-z0-9+/]{40,}/;

/** The redactor's formats the scan looks for, with the part of a match that must look random. */
const FORMATS = TOKEN_FORMATS.filter((f) => f.kind !== PEM_KIND && f.kind !== 'a JSON Web Token');
const PREFIX =
  /^(?:github_pat_|gh[pousr]_|sk-ant-(?:api\d\d-|admin\d\d-)?|sk-(?:proj-|svcacct-|admin-|live-|test-)?|xox[abposre]-|https:\/\/hooks\.slack\.com\/services\/|AIza)/;

/** What credential one added line holds, if any. */
function lineSecret(text: string): string | undefined {
  if (holdsRegisteredSecret(text, credentialLike)) return 'a secret the school holds';
  for (const { kind, pattern } of FORMATS) {
    for (const m of text.matchAll(new RegExp(pattern.source, 'g'))) {
      const token = m[0];
      if (kind === 'an AWS access key id') {
        if (!token.endsWith('EXAMPLE')) return kind;
        continue;
      }
      const body = token.replace(PREFIX, '');
      if (/[0-9]/.test(body) && /[A-Za-z]/.test(body) && entropy(body) >= 3) return kind;
    }
  }
  return credentialAssignment(text);
}

/**
 * A registered secret that counts in a patch: the school registers every value of a variable named
 * like a key or token, and a short or plain one (`production`, a URL) is no credential to refuse a
 * change for — though the redactor still hides it in logs.
 */
function credentialLike(secret: string): boolean {
  return secret.length >= 16 && !/^https?:\/\//.test(secret) && entropy(secret) >= 3;
}

/** Key names (lower case, letters and digits) whose long random value is a credential. */
const CREDENTIAL_KEY =
  /(?:token|secret|password|passwd|passphrase|apikey|accesskey|secretkey|privatekey|credential|credentials|clientsecret)$/;
const VALUE = '[A-Za-z0-9+/=_.~-]{32,}';
const ASSIGNMENTS = [
  // `key = "v"`, `key: 'v'`, `"key": "v"`, `key := "v"`, `:key => "v"`, `key: String = "v"`.
  new RegExp(
    `([A-Za-z0-9_$@.-]+)["']?\\s*(?::=|=>|=|:)\\s*(?:[A-Za-z]+\\s*=\\s*)?["'\`](${VALUE})["'\`]`,
    'g',
  ),
  // `KEY=v` in an env file, `key: v` in YAML.
  new RegExp(`^\\s*(?:export\\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\\s*[=:]\\s*(${VALUE})\\s*$`, 'g'),
];

function credentialAssignment(text: string): string | undefined {
  for (const re of ASSIGNMENTS) {
    for (const m of text.matchAll(re)) {
      const key = (m[1] ?? '')
        .split('.')
        .pop()!
        .toLowerCase()
        .replace(/[^a-z0-9]/g, '');
      const value = m[2] ?? '';
      if (!CREDENTIAL_KEY.test(key)) continue;
      if (!/[0-9]/.test(value) || !/[A-Za-z]/.test(value)) continue;
      if (entropy(value) >= 4) return `a high-entropy value assigned to \`${key.slice(0, 60)}\``;
    }
  }
  return undefined;
}

/** Shannon entropy of `s`, in bits a character. Hex is at most 4; random base64 near 6. */
export function entropy(s: string): number {
  const counts = new Map<string, number>();
  for (const c of s) counts.set(c, (counts.get(c) ?? 0) + 1);
  let h = 0;
  for (const n of counts.values()) {
    const p = n / s.length;
    h -= p * Math.log2(p);
  }
  return h;
}

function count(n: string | undefined): number {
  return n === undefined ? 1 : Number(n);
}

/** The path of a `+++` line: `b/x`, `/dev/null` or a C-quoted `"b/x"`. */
function newPath(spec: string): string {
  const s = spec.replace(/\t.*$/, '');
  const unquoted = s.startsWith('"') ? unquote(s) : s;
  return unquoted === '/dev/null' ? unquoted : unquoted.replace(/^[a-z]\//, '');
}

/** git's C quoting (`"a\303\251\t\""`): octal bytes as UTF-8, the usual escapes. */
function unquote(s: string): string {
  const bytes: number[] = [];
  const body = s.slice(1, s.endsWith('"') ? -1 : undefined);
  const escapes: Record<string, number> = { n: 10, t: 9, r: 13, a: 7, b: 8, f: 12, v: 11, '"': 34, '\\': 92 };
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== '\\') {
      bytes.push(...Buffer.from(c, 'utf8'));
      continue;
    }
    const oct = /^[0-7]{3}/.exec(body.slice(i + 1));
    if (oct) {
      bytes.push(parseInt(oct[0], 8));
      i += 3;
    } else {
      const e = body[i + 1] ?? '';
      bytes.push(escapes[e] ?? e.charCodeAt(0));
      i += 1;
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

function dedupe(findings: SecretFinding[]): SecretFinding[] {
  const seen = new Set<string>();
  return findings.filter((f) => {
    const k = `${f.file}\0${f.line}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
