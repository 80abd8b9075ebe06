import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser, type Locator } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/tmp.js';
import { EXPECTED_COUNTS, PLANTED, writeKnownSchool } from './fixture.js';

/**
 * The HTML report in a real browser: headless Chromium from the distribution's packages, driven by
 * playwright-core. The report is written by the real `school report` verb in a child process, opened
 * from a file:// URL, and checked in the DOM. Without /usr/bin/chromium the test is skipped with a
 * message saying how to get it, so a missing browser is visible, never a silent pass.
 */
const CHROMIUM = process.env.SCHOOL_CHROMIUM ?? '/usr/bin/chromium';
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium) {
  process.stderr.write(
    `board browser test SKIPPED: ${CHROMIUM} not found. Install it (Debian: apt-get install -y chromium) or set SCHOOL_CHROMIUM.\n`,
  );
}

const ROOT = resolve(import.meta.dirname, '../..');
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

describe.skipIf(!haveChromium)(
  'HTML report in headless Chromium (skipped when /usr/bin/chromium is absent)',
  () => {
    const dir = tempDir('board-browser-');
    let browser: Browser;
    let report: string;
    let screenshots: string;

    beforeAll(async () => {
      const stateDir = join(dir.path, 'state');
      // Relative to the real clock: the verb renders ages and charts against the time it runs.
      const { config } = await writeKnownSchool(stateDir, new Date());
      const configFile = join(dir.path, 'school.yml');
      // YAML is a superset of JSON: the fixture's configuration, as a user would write it.
      writeFileSync(
        configFile,
        JSON.stringify({
          stateDir,
          fleet: { daemons: config.fleet.daemons },
          agents: config.agents,
          dispatch: { spendCap: 10 },
        }),
      );
      report = join(dir.path, 'out', 'board.html');
      screenshots = process.env.SCHOOL_SCREENSHOT_DIR ?? join(dir.path, 'shots');
      mkdirSync(screenshots, { recursive: true });
      const run = spawnSync(
        process.execPath,
        [
          '--import',
          'tsx',
          join(ROOT, 'src/cli/index.ts'),
          'report',
          '--html',
          report,
          '--config',
          configFile,
        ],
        { cwd: ROOT, encoding: 'utf8' },
      );
      expect(run.stderr).toBe('');
      expect(run.status).toBe(0);
      expect(run.stdout).toContain('wrote');
      browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true });
    });

    afterAll(async () => {
      await browser?.close();
      if (!process.env.SCHOOL_SCREENSHOT_DIR) dir?.cleanup();
    });

    it('shows the lanes, the leaderboard and both charts, makes no network request, and screenshots', async () => {
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      const page = await context.newPage();
      const requests: string[] = [];
      context.on('request', (r) => requests.push(r.url()));
      const url = pathToFileURL(report).href;
      await page.goto(url, { waitUntil: 'load' });

      for (const [lane, count] of Object.entries(EXPECTED_COUNTS)) {
        await expect(page.getByTestId(`lane-count-${lane}`).textContent()).resolves.toBe(String(count));
        expect(await page.getByTestId(`lane-${lane}`).getByTestId('item').count()).toBe(count);
      }
      const attrs = async (loc: Locator, ...names: string[]) => {
        const out: Array<Array<string | null>> = [];
        for (const el of await loc.all()) out.push(await Promise.all(names.map((n) => el.getAttribute(n))));
        return out;
      };
      const running = (
        await attrs(page.getByTestId('lane-running').getByTestId('item'), 'data-issue')
      ).flat();
      expect(running).toEqual(['2', '3']);
      // Issue text is text: the <script> in a title is escaped, never an element.
      expect(await page.locator('script').count()).toBe(0);
      await expect(page.getByTestId('lane-running').textContent()).resolves.toContain(
        '<script>alert(1)</script>',
      );

      const rows = await attrs(page.getByTestId('leader-row'), 'data-rank', 'data-agent');
      expect(rows).toEqual([
        ['1', 'ada'],
        ['2', 'bob'],
      ]);
      expect(await page.getByTestId('gantt-bar').count()).toBe(11);
      expect(await page.getByTestId('gantt').isVisible()).toBe(true);
      expect(await page.getByTestId('queue-chart').isVisible()).toBe(true);
      await expect(page.getByTestId('pause').textContent()).resolves.toContain(
        'ended with usage_limit: credit limit reached',
      );

      const body = await page.content();
      expect(body).not.toContain(PLANTED);
      await expect(page.getByTestId('lane-ready').textContent()).resolves.toContain('[REDACTED]');

      const shot = join(screenshots, 'board.png');
      await page.screenshot({ path: shot, fullPage: true });
      expect(statSync(shot).size).toBeGreaterThan(10_000);

      // The only request is the report itself.
      expect(requests).toEqual([url]);
      await context.close();
    });
  },
);
