import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { loadConfig } from '../../src/config/load.js';
import { classificationSchema } from '../../src/config/schema.js';
import { sanitizeText } from '../../src/security/sanitize.js';
import { redactText } from '../../src/security/redact.js';

/** The subset of GitHub's REST issue object the curriculum reads (GET /repos/{o}/{r}/issues). */
const restIssue = z.object({
  id: z.number().int(),
  number: z.number().int().positive(),
  title: z.string().min(1),
  body: z.string().nullable(),
  labels: z.array(z.object({ name: z.string().min(1) })),
  state: z.enum(['open', 'closed']),
  html_url: z.string().url(),
  url: z.string().url(),
  updated_at: z.iso.datetime(),
  created_at: z.iso.datetime(),
  user: z.object({ login: z.string() }),
  pull_request: z.object({ url: z.string().url(), html_url: z.string().url() }).optional(),
});

const issues = z.array(restIssue).parse(JSON.parse(readFileSync('examples/issues.json', 'utf8')));
const real = issues.filter((i) => !i.pull_request);

/** The director's override block: a fenced code block tagged `school`. */
function overrideOf(body: string | null): Record<string, unknown> | undefined {
  const m = /```school\n([\s\S]*?)```/.exec(body ?? '');
  return m ? (parseYaml(m[1] ?? '') as Record<string, unknown>) : undefined;
}

describe('examples/issues.json', () => {
  it('holds 6-10 open issues in REST shape with unique numbers, one of them a pull request', () => {
    expect(issues.length).toBeGreaterThanOrEqual(6);
    expect(issues.length).toBeLessThanOrEqual(10);
    expect(new Set(issues.map((i) => i.number)).size).toBe(issues.length);
    expect(issues.every((i) => i.state === 'open')).toBe(true);
    expect(issues.filter((i) => i.pull_request).map((i) => i.number)).toEqual([4]);
    for (const i of issues) expect(i.html_url).toMatch(new RegExp(`/(issues|pull)/${i.number}$`));
  });

  it('has one hostile issue that the sanitizer and redactor make inert', () => {
    const hostile = real.find((i) => i.title.includes('rm -rf'));
    expect(hostile).toBeDefined();
    const text = `${hostile!.title}\n${hostile!.body}`;
    expect(text).toContain('; rm -rf ~ $(id)');
    expect(text).toMatch(/\u202e/);
    expect(text).toMatch(/\u200b/);
    const title = sanitizeText(hostile!.title, 256);
    const body = sanitizeText(hostile!.body ?? '', 65_536);
    expect(title.report.bidi).toBe(1);
    expect(body.report.zeroWidth).toBeGreaterThan(0);
    expect(body.report.bidi).toBeGreaterThan(0);
    expect(body.report.tag).toBeGreaterThan(0);
    // Shell text stays as text: nothing hands it to a shell (N1.2).
    expect(title.text).toBe('Show user names like ; rm -rf ~ $(id) safely');
    // The planted example key never survives the redactor.
    expect(body.text).toContain('AKIAIOSFODNN7EXAMPLE');
    expect(redactText(body.text)).not.toContain('AKIAIOSFODNN7EXAMPLE');
  });

  it('override blocks set valid classification fields, and non-finite numbers are left for defaults', () => {
    const blocks = new Map(real.map((i) => [i.number, overrideOf(i.body)] as const));
    const valid = [...blocks].filter(([n, b]) => b && n !== 8);
    expect(valid.map(([n]) => n)).toEqual([2, 5, 6, 7]);
    for (const [n, block] of valid) {
      const parsed = classificationSchema.parse(block);
      // Each override fences the issue to its own solution directory, so crews can run side by side.
      expect(parsed.fences).toEqual([`solutions/issue-${n}/**`]);
    }
    expect(classificationSchema.parse(blocks.get(2)).difficulty).toBe(3);
    expect(classificationSchema.parse(blocks.get(2)).priority).toBe(0);
    const hostileNumbers = blocks.get(8)!;
    for (const v of Object.values(hostileNumbers)) expect(Number.isFinite(v)).toBe(false);
  });

  it('examples/school.yml is a valid configuration for two daemons of two worktrees', () => {
    const config = loadConfig('examples/school.yml');
    expect(config.fleet.daemons.map((d) => [d.id, d.worktrees])).toEqual([
      ['alpha', 2],
      ['beta', 2],
    ]);
    expect(config.dispatch.maxCrews).toBe(4);
    expect(config.dispatch.verify).toEqual(['node', '--test']);
    expect(config.curriculum.issuesFile).toBe('examples/issues.json');
    expect(config.agents[0]?.command).toEqual(['node', 'examples/student.mjs', '{brief}']);
  });
});
