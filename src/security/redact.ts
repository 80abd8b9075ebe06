/**
 * The redactor (docs/architecture.md). Every byte written to state, summaries, artifacts, comments and logs
 * passes through here. Sensitive keys and token-shaped values become `[REDACTED]`; identity fields
 * (keys, issue numbers, crew ids, statuses, attempt counts) are never touched, so a redacted record
 * keeps its place in queues and ledgers.
 */

export const REDACTED = '[REDACTED]';

/** Values of these fields are identities the state machine depends on: preserved exactly. */
const IDENTITY_FIELDS = new Set([
  'key',
  'keys',
  'type',
  'at',
  'id',
  'issue',
  'issue_number',
  'issueNumber',
  'number',
  'crew_id',
  'crewId',
  'job_key',
  'jobKey',
  'status',
  'state',
  'attempts',
  'max_attempts',
  'maxAttempts',
  'generation',
  'sha256',
  'base_sha',
  'baseSha',
  'diff_sha',
  'diffSha',
]);

/** Key names (normalized: lower case, letters and digits only) whose values are always secret. */
const SENSITIVE_SUFFIXES = [
  'token',
  'secret',
  'password',
  'passwd',
  'passphrase',
  'apikey',
  'privatekey',
  'accesskey',
  'secretkey',
  'credential',
  'credentials',
  'authorization',
  'cookie',
  'setcookie',
  'clientsecret',
  'sessionid',
];

export function isSensitiveKey(key: string): boolean {
  if (IDENTITY_FIELDS.has(key)) return false;
  let known = sensitiveKeys.get(key);
  if (known === undefined) {
    const k = key.toLowerCase().replace(/[^a-z0-9]/g, '');
    known = SENSITIVE_SUFFIXES.some((s) => k === s || k.endsWith(s));
    // Records repeat the same few keys: remember them (bounded, for keys that come from data).
    if (sensitiveKeys.size < 4096) sensitiveKeys.set(key, known);
  }
  return known;
}
const sensitiveKeys = new Map<string, boolean>();

/**
 * Token formats that are secret wherever they appear, each with the name a person reads (the secret
 * scan of a patch, ./secret-scan.ts, names a finding by it). Order matters: longest, most specific
 * first.
 */
export const TOKEN_FORMATS: ReadonlyArray<{ kind: string; pattern: RegExp }> = [
  // PEM private keys, terminated or torn.
  {
    kind: 'a PEM private key',
    pattern: /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)/g,
  },
  // GitHub tokens.
  { kind: 'a GitHub token', pattern: /\bgithub_pat_[A-Za-z0-9_]{20,255}/g },
  { kind: 'a GitHub token', pattern: /\bgh[pousr]_[A-Za-z0-9]{20,255}\b/g },
  // Anthropic and OpenAI keys.
  { kind: 'an Anthropic API key', pattern: /\bsk-ant-[A-Za-z0-9_-]{16,}/g },
  { kind: 'an OpenAI API key', pattern: /\bsk-(?:proj-|svcacct-|admin-|live-|test-)?[A-Za-z0-9_-]{20,}/g },
  // AWS access key ids.
  { kind: 'an AWS access key id', pattern: /\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[A-Z0-9]{16}\b/g },
  // Slack tokens and webhooks.
  { kind: 'a Slack token', pattern: /\bxox[abposre]-[A-Za-z0-9-]{8,}/g },
  { kind: 'a Slack webhook', pattern: /https:\/\/hooks\.slack\.com\/services\/[A-Za-z0-9/]+/g },
  // JSON Web Tokens.
  { kind: 'a JSON Web Token', pattern: /\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}/g },
  // Google API keys.
  { kind: 'a Google API key', pattern: /\bAIza[0-9A-Za-z_-]{35}\b/g },
];
const TOKEN_PATTERNS: RegExp[] = TOKEN_FORMATS.map((f) => f.pattern);

/** `Authorization: Bearer x`, `token=x`, `"password": "x"` and credentials in URLs. */
const CONTEXT_PATTERNS: Array<[RegExp, string]> = [
  [/\b(authorization\s*[:=]\s*(?:bearer|token|basic)\s+)[^\s"',;]+/gi, `$1${REDACTED}`],
  [/\b(bearer\s+)[A-Za-z0-9._~+/-]{16,}=*/gi, `$1${REDACTED}`],
  [
    /\b((?:[a-z0-9]*[_-])?(?:token|secret|password|passwd|api[_-]?key|access[_-]?key|secret[_-]?key|private[_-]?key)["']?\s*[:=]\s*["']?)(?!\[REDACTED\])[^\s"',;&]{4,}/gi,
    `$1${REDACTED}`,
  ],
  [/\b([a-z][a-z0-9+.-]*:\/\/)[^/\s:@]+:[^/\s@]+@/gi, `$1${REDACTED}@`],
];

const knownSecrets = new Set<string>();

/** Registers an exact secret value (a token read from an input or the environment). */
export function registerSecret(value: string | undefined): void {
  if (value && value.length >= 6) knownSecrets.add(value);
}

/**
 * Whether `text` holds a registered secret that `counts` (the secret scan of a patch asks, for the
 * values it takes for credentials; the value stays here).
 */
export function holdsRegisteredSecret(
  text: string,
  counts: (secret: string) => boolean = () => true,
): boolean {
  for (const secret of knownSecrets) if (text.includes(secret) && counts(secret)) return true;
  return false;
}

/**
 * A necessary condition for any pattern above to match: a literal each pattern cannot match
 * without. Text with none of them (most issue text, most log lines) is returned after two scans
 * instead of fourteen regex passes. The case-insensitive literals are tested on lower-cased text
 * with a case-sensitive regex, which V8 runs several times faster than an `i` alternation. Keep
 * this in step with the patterns; a property test checks that the two agree.
 */
const LOWER_LITERALS =
  /private key|github_pat_|gh[pousr]_|sk-|xox|hooks\.slack\.com|authorization|bearer|token|secret|passw|api[_-]?key|access[_-]?key|private[_-]?key|:\/\//;
const EXACT_LITERALS = /eyJ|AIza|A(?:KI|SI|GP|ID|RO|NP)A/;

function mayHoldSecret(text: string): boolean {
  return EXACT_LITERALS.test(text) || LOWER_LITERALS.test(text.toLowerCase());
}

/** Redacts token-shaped substrings and registered secrets from free text. */
export function redactText(text: string): string {
  let out = text;
  if (knownSecrets.size > 0) {
    for (const secret of knownSecrets) {
      if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    }
  }
  if (!mayHoldSecret(out)) return out;
  return redactPatterns(out);
}

/** The patterns alone, without the prefilter (exported for the equivalence test). */
export function redactPatterns(text: string): string {
  let out = text;
  for (const re of TOKEN_PATTERNS) out = out.replace(re, REDACTED);
  for (const [re, replacement] of CONTEXT_PATTERNS) out = out.replace(re, replacement);
  return out;
}

/**
 * Structural redaction: walks objects and arrays, redacts every value under a sensitive key and
 * every token-shaped string elsewhere, and leaves identity fields as they are.
 */
export function redact<T>(value: T): T {
  return walk(value, undefined, 0) as T;
}

function walk(value: unknown, key: string | undefined, depth: number): unknown {
  if (depth > 64) return REDACTED;
  if (key !== undefined) {
    if (IDENTITY_FIELDS.has(key)) return value;
    if (isSensitiveKey(key) && value !== null && value !== undefined && value !== '') return REDACTED;
  }
  if (typeof value === 'string') return redactText(value);
  if (typeof value !== 'object' || value === null || value instanceof Date) return value;
  // Plain loops rather than map/entries: records are walked by the thousand (a drain's verdicts,
  // every appended event), mostly in short-lived processes where the allocations show.
  if (Array.isArray(value)) {
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) out[i] = walk(value[i], undefined, depth + 1);
    return out;
  }
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(value)) out[k] = walk((value as Record<string, unknown>)[k], k, depth + 1);
  return out;
}
