#!/usr/bin/env node
// A deterministic student for the embedded example: the same brief always produces the same change.
//
// Contract (the one every student follows, see docs/crews.md):
//   - the brief path comes from $SCHOOL_BRIEF, or the first argument ({brief} in the agent argv);
//   - the work happens in the worktree: $SCHOOL_WORKTREE, or the current directory;
//   - usage (tokens, cost) goes to $SCHOOL_USAGE_FILE as JSON when that variable is set;
//   - a report goes to $SCHOOL_REPORT_FILE when set, otherwise to report.md in the worktree;
//   - exit 0 when the work is done; exit 2 when the brief cannot be read.
//
// The brief is data. This script only reads the issue number and the attempt from it and never
// hands any of its text to a shell or to eval (N1.2).
//
// Issue 6 is the deliberate failure: on a first attempt the student ships a clamp() that lets NaN
// through, so the verification command (`node --test`) fails and the grader rejects the crew. On a
// repair (attempt 2 or more) it ships the correct version, so the loop shows a rejection followed by
// an accepted repair.

import { mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const FAILING_ISSUE = 6;

function fail(text) {
  process.stderr.write(`student: ${text}\n`);
  process.exit(2);
}

/** The issue number: $SCHOOL_ISSUE, a JSON brief's number, or the first "issue … N" / "#N". */
export function issueNumberOf(brief, env = process.env) {
  const fromEnv = Number(env.SCHOOL_ISSUE ?? env.SCHOOL_ISSUE_NUMBER);
  if (Number.isInteger(fromEnv) && fromEnv > 0) return fromEnv;
  try {
    const json = JSON.parse(brief);
    const n = Number(json?.issueNumber ?? json?.number ?? json?.issue?.number);
    if (Number.isInteger(n) && n > 0) return n;
  } catch {
    // Not JSON: a Markdown brief.
  }
  const match = /\bissue\b[^0-9\n]{0,16}(\d{1,9})/i.exec(brief) ?? /#(\d{1,9})\b/.exec(brief);
  const n = match ? Number(match[1]) : NaN;
  return Number.isInteger(n) && n > 0 ? n : undefined;
}

/** 1 for a first run; a repair is 2 (from $SCHOOL_ATTEMPT, "attempt: N" or the word "repair"). */
export function attemptOf(brief, env = process.env) {
  const fromEnv = Number(env.SCHOOL_ATTEMPT);
  if (Number.isInteger(fromEnv) && fromEnv > 0) return fromEnv;
  try {
    const n = Number(JSON.parse(brief)?.attempt);
    if (Number.isInteger(n) && n > 0) return n;
  } catch {
    // Not JSON.
  }
  const match = /\battempt\b[^0-9\n]{0,16}(\d{1,3})/i.exec(brief);
  if (match) return Number(match[1]);
  return /\brepair\b/i.test(brief) ? 2 : 1;
}

const header = `import { test } from 'node:test';\nimport assert from 'node:assert/strict';\n`;

/** What the student writes for each issue of examples/issues.json; anything else gets a generic module. */
function solutionFor(issue, attempt) {
  switch (issue) {
    case 1:
      return {
        summary: 'Added greet(name).',
        code: `/** A greeting for one person. */\nexport function greet(name) {\n  return \`Hello, \${name}!\`;\n}\n`,
        test: `${header}import { greet } from './index.mjs';\n\ntest('greet names the person', () => {\n  assert.equal(greet('Ada'), 'Hello, Ada!');\n});\n`,
      };
    case 2:
      return {
        summary: 'Added rangeStep(start, end, step) on top of range().',
        code: `import { range } from '../../src/math.mjs';\n\n/** Every step-th integer from start up to, but not including, end. */\nexport function rangeStep(start, end, step) {\n  if (!Number.isInteger(step) || step < 1) throw new RangeError('step must be a positive integer');\n  return range(0, Math.ceil(Math.max(0, end - start) / step)).map((i) => start + i * step);\n}\n`,
        test: `${header}import { rangeStep } from './index.mjs';\n\ntest('rangeStep walks by step and excludes end', () => {\n  assert.deepEqual(rangeStep(0, 10, 3), [0, 3, 6, 9]);\n  assert.deepEqual(rangeStep(5, 5, 1), []);\n  assert.throws(() => rangeStep(0, 3, 0), RangeError);\n});\n`,
      };
    case 3:
      return {
        summary: 'Added quoteForDisplay(name): names are shown, never executed.',
        code: `/** Shows a user-supplied name as a quoted literal; nothing here ever reaches a shell. */\nexport function quoteForDisplay(name) {\n  return JSON.stringify(String(name));\n}\n`,
        test: `${header}import { quoteForDisplay } from './index.mjs';\n\ntest('hostile names come out as inert quoted text', () => {\n  assert.equal(quoteForDisplay('; rm -rf ~ $(id)'), '"; rm -rf ~ $(id)"');\n});\n`,
      };
    case 5:
      return {
        summary: 'Added slugify(text).',
        code: `/** Lower-case words joined by dashes. */\nexport function slugify(text) {\n  return String(text)\n    .toLowerCase()\n    .replace(/[^a-z0-9]+/g, '-')\n    .replace(/^-+|-+$/g, '');\n}\n`,
        test: `${header}import { slugify } from './index.mjs';\n\ntest('slugify joins words with dashes', () => {\n  assert.equal(slugify('  Hello, School Core! '), 'hello-school-core');\n});\n`,
      };
    case FAILING_ISSUE: {
      // Deliberately wrong on the first attempt (see the header comment).
      const guard = attempt >= 2 ? `  if (Number.isNaN(value)) throw new RangeError('value is NaN');\n` : '';
      return {
        summary:
          attempt >= 2
            ? 'Repair: clamp(value, lo, hi) now rejects NaN.'
            : 'Added clamp(value, lo, hi). (Known gap: NaN is not rejected yet.)',
        code: `/** value limited to [lo, hi]; NaN is an error, not a number to clamp. */\nexport function clamp(value, lo, hi) {\n${guard}  return Math.min(hi, Math.max(lo, value));\n}\n`,
        test: `${header}import { clamp } from './index.mjs';\n\ntest('clamp limits to the range', () => {\n  assert.equal(clamp(5, 0, 3), 3);\n  assert.equal(clamp(-1, 0, 3), 0);\n});\n\ntest('clamp rejects NaN', () => {\n  assert.throws(() => clamp(NaN, 0, 3), RangeError);\n});\n`,
      };
    }
    case 7:
      return {
        summary: 'Added sum(list) using add().',
        code: `import { add } from '../../src/math.mjs';\n\n/** Sum of a list of numbers; 0 for an empty list. */\nexport function sum(list) {\n  return list.reduce(add, 0);\n}\n`,
        test: `${header}import { sum } from './index.mjs';\n\ntest('sum adds every element', () => {\n  assert.equal(sum([1, 2, 3, 4]), 10);\n  assert.equal(sum([]), 0);\n});\n`,
      };
    case 8:
      return {
        summary: 'Added wordCount(text) and a capitalized title helper.',
        code: `import { capitalize } from '../../src/strings.mjs';\n\n/** Number of whitespace-separated words. */\nexport function wordCount(text) {\n  const words = String(text).trim().split(/\\s+/);\n  return words[0] === '' ? 0 : words.length;\n}\n\nexport function title(text) {\n  return capitalize(String(text).trim());\n}\n`,
        test: `${header}import { title, wordCount } from './index.mjs';\n\ntest('wordCount counts words', () => {\n  assert.equal(wordCount(' two  words '), 2);\n  assert.equal(wordCount('   '), 0);\n  assert.equal(title(' school'), 'School');\n});\n`,
      };
    default:
      return {
        summary: `Added the answer module for issue ${issue}.`,
        code: `/** The example student's deterministic answer for issue ${issue}. */\nexport function answer() {\n  return ${issue * 2};\n}\n`,
        test: `${header}import { answer } from './index.mjs';\n\ntest('answer is twice the issue number', () => {\n  assert.equal(answer(), ${issue * 2});\n});\n`,
      };
  }
}

function main() {
  const briefPath = process.env.SCHOOL_BRIEF || process.argv[2];
  if (!briefPath) fail('no brief: set SCHOOL_BRIEF or pass the brief path as the first argument.');
  let brief;
  try {
    brief = readFileSync(briefPath, 'utf8');
  } catch (e) {
    fail(`cannot read the brief at ${briefPath}: ${e instanceof Error ? e.message : String(e)}`);
  }
  const issue = issueNumberOf(brief);
  if (issue === undefined) fail(`the brief at ${briefPath} names no issue number ("issue N" or "#N").`);
  const attempt = attemptOf(brief);
  const worktree = process.env.SCHOOL_WORKTREE || process.cwd();

  const solution = solutionFor(issue, attempt);
  const dir = join(worktree, 'solutions', `issue-${issue}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'index.mjs'), solution.code);
  writeFileSync(join(dir, 'index.test.mjs'), solution.test);

  const report =
    `# Report for issue ${issue} (attempt ${attempt})\n\n${solution.summary}\n\n` +
    `Files: solutions/issue-${issue}/index.mjs, solutions/issue-${issue}/index.test.mjs\n`;
  writeFileSync(process.env.SCHOOL_REPORT_FILE || join(worktree, 'report.md'), report);

  if (process.env.SCHOOL_USAGE_FILE) {
    // Deterministic "usage": tokens from the sizes read and written, priced like a small model.
    const inputTokens = Math.ceil(Buffer.byteLength(brief) / 4);
    const outputTokens = Math.ceil((solution.code.length + solution.test.length + report.length) / 4);
    const costUsd = Math.round(inputTokens * 3 + outputTokens * 15) / 1e6;
    writeFileSync(process.env.SCHOOL_USAGE_FILE, JSON.stringify({ inputTokens, outputTokens, costUsd }) + '\n');
  }
  process.stdout.write(`student: issue ${issue}, attempt ${attempt}: ${solution.summary}\n`);
}

// Run only as a program, so the parsing helpers above can also be imported.
const invoked = process.argv[1] ? pathToFileURL(realpathSync(process.argv[1])).href : '';
if (invoked === import.meta.url) main();
