import { randomBytes } from 'node:crypto';

/**
 * The planted secret corpus: one token of each format docs/architecture.md names. Each carries a random core
 * that cannot occur by chance, and the scan looks for that core, so a partially redacted token
 * (prefix kept, tail leaked) is still found.
 */
export interface PlantedSecret {
  kind: string;
  value: string;
  /** The part that must never appear in any persisted byte. */
  core: string;
}

function core(
  n: number,
  alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789',
): string {
  const bytes = randomBytes(n);
  return Array.from(bytes, (b) => alphabet[b % alphabet.length]).join('');
}

export function plantSecrets(): PlantedSecret[] {
  const gh = core(36);
  const pat = core(60, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_');
  const aws = core(16, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567');
  const slack = core(24);
  const ant = core(40);
  const oai = core(40);
  const jwt = [core(20), core(30), core(24)];
  const pem = core(64, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/');
  return [
    { kind: 'github', value: `ghp_${gh}`, core: gh },
    { kind: 'github-pat', value: `github_pat_11A${pat}`, core: pat },
    { kind: 'aws', value: `AKIA${aws}`, core: `AKIA${aws}` },
    { kind: 'slack', value: `xoxb-1234-5678-${slack}`, core: slack },
    { kind: 'anthropic', value: `sk-ant-api03-${ant}`, core: ant },
    { kind: 'openai', value: `sk-proj-${oai}`, core: oai },
    { kind: 'jwt', value: `eyJ${jwt[0]}.eyJ${jwt[1]}.${jwt[2]}`, core: jwt[1]! },
    {
      kind: 'pem',
      value: `-----BEGIN RSA PRIVATE KEY-----\nMIIEow${pem}\n-----END RSA PRIVATE KEY-----`,
      core: pem,
    },
  ];
}

/** Which planted secrets occur in `bytes` (by their core). */
export function leaked(bytes: Buffer, secrets: readonly PlantedSecret[]): PlantedSecret[] {
  return secrets.filter((s) => bytes.includes(s.core));
}
