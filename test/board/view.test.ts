import { existsSync, readdirSync, readFileSync, writeFileSync, appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildView } from '../../src/board/view.js';
import { renderTerminal } from '../../src/board/terminal.js';
import { renderHtml } from '../../src/board/html.js';
import { actionSummaryMarkdown, boardMarkdown, laneRows } from '../../src/board/summary.js';
import { LANES } from '../../src/board/model.js';
import { requeueIssue } from '../../src/dispatch/gates/pause.js';
import { registerSecret } from '../../src/security/redact.js';
import { StateLayout } from '../../src/state/layout.js';
import { EXPECTED_COUNTS, NOW, PLANTED, fixtureConfig, knownSchoolCopies } from './fixture.js';

/** A private copy of the known school (written once with the real writers) for one test. */
const copies = knownSchoolCopies('board-view-');

describe('buildView over a known state directory', () => {
  it('puts every issue in exactly one lane with the expected counts', async () => {
    const { layout, config } = copies.copy();
    const view = buildView(layout, config, NOW);
    expect(view.healthy).toBe(true);
    expect(view.counts).toEqual(EXPECTED_COUNTS);
    expect(view.lanes.map((l) => l.id)).toEqual([...LANES]);
    const issues = view.lanes.flatMap((l) => l.items.map((i) => i.issue)).sort((a, b) => a - b);
    expect(issues).toEqual(Array.from({ length: 13 }, (_, i) => i + 1));

    const lane = (id: string) => view.lanes.find((l) => l.id === id)!;
    expect(lane('running').items.map((i) => [i.issue, i.daemon, i.slot, i.agent])).toEqual([
      [2, 'alpha', 0, 'ada'],
      [3, 'alpha', 1, 'bob'],
    ]);
    expect(lane('running').items[0]!.ageSeconds).toBe(45 * 60);
    expect(lane('stopped').items[0]).toMatchObject({ issue: 9, reason: 'repair-stopped-after-two-failures' });
    expect(lane('ready').items.find((i) => i.issue === 10)).toMatchObject({
      repair: true,
      crewId: 'c10-0000000c',
    });
    expect(lane('paused').items[0]).toMatchObject({ issue: 11, reason: 'credit limit reached' });
    expect(lane('dead_letter').items[0]).toMatchObject({
      issue: 8,
      attempts: 3,
      reason: 'reviewer crashed (attempt 3)',
    });
    expect(lane('rejected').items[0]!.reason).toContain('outside the fences');
    expect(lane('untrusted').items[0]).toMatchObject({
      issue: 13,
      reason: expect.stringMatching(/author is NONE/),
    });
  });

  it('ranks the leaderboard by score, then graded count, and keeps domain × difficulty cells', async () => {
    const { layout, config } = copies.copy();
    const view = buildView(layout, config, NOW);
    expect(view.leaderboard.overall.map((r) => [r.rank, r.agent, r.count])).toEqual([
      [1, 'ada', 1],
      [2, 'bob', 2],
    ]);
    expect(view.leaderboard.overall[0]!.score).toBeGreaterThan(view.leaderboard.overall[1]!.score);
    expect(view.leaderboard.cells.map((c) => `${c.domain}/${c.difficulty}/${c.agent}`)).toEqual([
      'cli/1/bob',
      'web/2/bob',
      'web/3/ada',
    ]);
  });

  it('reports load, roster, timeline, queue depth, spend and pauses from the same state', async () => {
    const { layout, config } = copies.copy();
    const view = buildView(layout, config, NOW);
    const alpha = view.daemons.find((d) => d.id === 'alpha')!;
    const beta = view.daemons.find((d) => d.id === 'beta')!;
    expect(alpha).toMatchObject({
      slots: 2,
      running: 2,
      planned: 0,
      load: 1,
      online: true,
      effectiveClass: 'standard',
    });
    expect(beta).toMatchObject({ slots: 1, running: 0, planned: 1, online: false, effectiveClass: 'light' });
    // Every started crew is a bar; running ones have no end.
    expect(view.timeline.bars).toHaveLength(11);
    expect(view.timeline.bars.filter((b) => b.status === 'running').map((b) => b.crewId)).toEqual([
      'c2-00000002',
      'c3-00000003',
    ]);
    expect(view.queue.depth).toBe(1);
    expect(view.queue.deadLetters).toBe(1);
    expect(Math.max(...view.queue.series.map((p) => p.depth))).toBe(5);
    expect(view.queue.series.at(-1)!.depth).toBe(1);
    expect(view.spend).toEqual({ spentUsd: 4.5, capUsd: 10, reached: false, fraction: 0.45 });
    expect(view.pauses.active).toEqual([
      expect.objectContaining({
        source: 'usage_limit',
        crewId: 'c11-0000000d',
        issue: 11,
        reason: 'crew c11-0000000d (issue #11) ended with usage_limit: credit limit reached',
      }),
    ]);
    expect(view.pauses.lastCleared).toMatchObject({ reason: 'maintenance done' });
  });

  it('redacts a token planted in an issue title in the view, the terminal, the HTML and the summary', async () => {
    const { layout, config } = copies.copy();
    // The planted title reached the state file unredacted (as a restored or foreign file might hold it).
    expect(readFileSync(layout.file('curriculum'), 'utf8')).toContain(PLANTED);
    const view = buildView(layout, config, NOW);
    const outputs = {
      json: JSON.stringify(view),
      terminal: renderTerminal(view),
      html: renderHtml(view),
      markdown: boardMarkdown(view),
    };
    for (const [name, text] of Object.entries(outputs)) {
      expect(text, name).not.toContain(PLANTED);
      expect(text, name).not.toContain(PLANTED.slice(4, 20));
    }
    const ready = view.lanes.find((l) => l.id === 'ready')!.items.find((i) => i.issue === 12)!;
    expect(ready.title).toBe('Rotate the deploy key [REDACTED] before Friday');
  });

  it('redacts a registered secret that is not token-shaped', async () => {
    const { layout, config } = copies.copy();
    registerSecret('hunter2-board-secret');
    // Written raw: the log's own writer would already have redacted it.
    appendFileSync(
      layout.file('school'),
      JSON.stringify({
        key: 'paused:manual:x',
        type: 'school.paused',
        at: NOW.toISOString(),
        data: { reason: 'login hunter2-board-secret failed', source: 'manual' },
      }) + '\n',
    );
    const view = buildView(layout, config, NOW);
    expect(view.pauses.active.map((p) => p.reason)).toContain('login [REDACTED] failed');
    expect(renderHtml(view)).not.toContain('hunter2-board-secret');
  });
});

describe('a requeued issue', () => {
  it('leaves the stopped lane when `school requeue` forgets its failed runs, as planning does', async () => {
    const { layout, config } = copies.copy();
    expect(buildView(layout, config, NOW).counts.stopped).toBe(1);
    await requeueIssue(layout, 9, 'the flaky test was fixed', NOW);
    const view = buildView(layout, config, NOW);
    expect(view.counts.stopped).toBe(0);
    expect(view.lanes.find((l) => l.id === 'ready')!.items.find((i) => i.issue === 9)).toMatchObject({
      crewId: 'c9-0000000b',
      reason: 'crew timeout',
    });
  });
});

describe('the HTML report is self-contained', () => {
  it('references nothing outside the file: no URL, no src/href, no script, no @import or url()', async () => {
    const { layout, config } = copies.copy();
    const html = renderHtml(buildView(layout, config, NOW));
    expect(html).not.toMatch(/https?:|\/\/[a-z]|\bsrc=|\bhref=|@import|url\(|<script|<link|<img|<iframe/i);
    expect(html).toContain("default-src 'none'");
    // Issue text is escaped, not markup.
    expect(html).toContain('Fix &lt;script&gt;alert(1)&lt;/script&gt; in the parser');
    expect(html).toContain('Document the &amp; operator &quot;quoted&quot;');
  });
});

describe('corrupt state', () => {
  it('shows an error lane with the quarantine path instead of crashing or an empty school', async () => {
    const { layout, config } = copies.copy();
    const crews = layout.file('crews');
    const lines = readFileSync(crews, 'utf8').split('\n');
    lines.splice(3, 0, '{"key": "broken", "type": "crew.pla');
    writeFileSync(crews, lines.join('\n'));

    const view = buildView(layout, config, NOW);
    expect(view.healthy).toBe(false);
    const problem = view.problems.find((p) => p.file === 'crews.jsonl')!;
    expect(problem.quarantinedTo).toMatch(/crews\.jsonl\.corrupt-/);
    expect(existsSync(problem.quarantinedTo!)).toBe(true);
    expect(problem.message).toContain('line 4');
    // Lanes from the unreadable registry say so; the grading side still shows what it knows.
    expect(view.lanes.find((l) => l.id === 'running')!.incomplete).toContain('crews.jsonl');
    expect(view.counts.accepted).toBe(2);
    expect(view.counts.dead_letter).toBe(1);

    const html = renderHtml(view);
    expect(html).toContain('data-testid="lane-error"');
    expect(html).toContain(problem.quarantinedTo!.split('/').pop()!);
    expect(renderTerminal(view)).toContain('quarantined copy:');
    expect(actionSummaryMarkdown('dispatch-crew', view)).toContain('[!CAUTION]');

    // The next read finds the live file gone: the quarantined copy keeps the board honest.
    const again = buildView(layout, config, NOW);
    expect(again.healthy).toBe(false);
    expect(again.problems.map((p) => p.quarantinedTo)).toEqual([problem.quarantinedTo]);
    expect(readdirSync(layout.root).filter((n) => n.includes('.corrupt-'))).toHaveLength(1);
  });

  it('reports curriculum records that do not match the schema without dropping the rest', async () => {
    const { layout, config } = copies.copy();
    appendFileSync(layout.file('curriculum'), JSON.stringify({ number: 'thirteen' }) + '\n');
    const view = buildView(layout, config, NOW);
    expect(view.problems.map((p) => p.file)).toEqual(['curriculum.jsonl']);
    expect(view.counts).toEqual(EXPECTED_COUNTS);
  });

  it('an absent state directory is an empty, healthy board', () => {
    const stateDir = join(copies.dir(), 'never-written');
    const view = buildView(new StateLayout(stateDir), fixtureConfig(stateDir), NOW);
    expect(view.healthy).toBe(true);
    expect(Object.values(view.counts).every((n) => n === 0)).toBe(true);
    expect(view.daemons.map((d) => [d.id, d.online, d.lastSeen])).toEqual([
      ['alpha', false, undefined],
      ['beta', false, undefined],
    ]);
    expect(renderHtml(view)).toContain('data-testid="gantt-empty"');
  });
});

describe('summaries render the same numbers', () => {
  it('lane rows and Markdown carry the view counts, escaped', async () => {
    const { layout, config } = copies.copy();
    const view = buildView(layout, config, NOW);
    const rows = laneRows(view);
    expect(rows.slice(1).map((r) => [r[0], r[1]])).toEqual(view.lanes.map((l) => [l.label, String(l.count)]));
    const md = actionSummaryMarkdown('dispatch-crew', view, 'school-board');
    expect(md).toContain('| Ready | Planned | Running |');
    expect(md).toContain('| 2 | 1 | 2 | 1 | 2 | 1 | 1 | 1 | 1 |');
    expect(md).toContain('&lt;script&gt;');
    expect(md).not.toContain('<script>');
    expect(md).toContain('**PAUSED**');
    expect(md).toContain('school-board');
  });
});
