import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { schoolAlerts } from '../../src/board/alerts.js';
import { buildView } from '../../src/board/view.js';
import { renderTerminal } from '../../src/board/terminal.js';
import { parseConfig } from '../../src/config/load.js';
import { audit } from '../../src/state/audit.js';
import { StateLayout } from '../../src/state/layout.js';
import { tempDir } from '../support/tmp.js';

/**
 * The board says the school's own failures (src/board/alerts.ts): a red base once however many
 * crews met it, an environment that failed a verification, never a crew's own alerts.
 */
let cleanup: (() => void) | undefined;
afterEach(() => {
  cleanup?.();
  cleanup = undefined;
});

describe("the school's own failures on the board", () => {
  it('lists a red base once, the environment failures, newest first, and leaves other alerts out', async () => {
    const t = tempDir('school-alerts-');
    cleanup = t.cleanup;
    const layout = new StateLayout(join(t.path, 'state'));
    mkdirSync(layout.root, { recursive: true });
    const red = 'the base 0123456789ab is red: 3 test(s) fail before any change (add; mul; neg)';
    await audit(layout, 'crew.alert', { crewId: 'c1', issueNumber: 1, kind: 'base-red', detail: red });
    await audit(layout, 'crew.alert', {
      crewId: 'c1',
      issueNumber: 1,
      kind: 'leftover-process',
      detail: 'x',
    });
    await audit(layout, 'crew.alert', {
      crewId: 'c2',
      issueNumber: 2,
      kind: 'environment-failed',
      detail:
        'verification could not judge the change: dispatch.install `npm ci` exited with 1 at base 0123456789ab; token ghp_abcdefghijklmnopqrstuvwxyz0123456789',
    });
    await audit(layout, 'crew.alert', { crewId: 'c3', issueNumber: 3, kind: 'base-red', detail: red });
    const alerts = schoolAlerts(layout);
    expect(alerts.map((a) => [a.kind, a.crewId])).toEqual([
      ['base-red', 'c3'],
      ['environment-failed', 'c2'],
    ]);
    expect(alerts[1]!.detail).not.toContain('ghp_abcdefghijklmnopqrstuvwxyz0123456789');
    const config = parseConfig({ stateDir: layout.root, repoPath: t.path });
    const view = buildView(layout, config);
    expect(view.alerts).toHaveLength(2);
    const text = renderTerminal(view);
    expect(text).toContain("The school's own failures (not the crews'):");
    expect(text).toContain('base-red (issue #3)');
    expect(text.match(/is red: 3 test\(s\) fail/g)).toHaveLength(1);
    expect(text).toContain('environment-failed (issue #2)');
    expect(text).not.toContain('leftover-process');
  });

  it('says nothing when there is nothing to say', () => {
    const t = tempDir('school-alerts-');
    cleanup = t.cleanup;
    const layout = new StateLayout(join(t.path, 'state'));
    mkdirSync(layout.root, { recursive: true });
    expect(schoolAlerts(layout)).toEqual([]);
    const view = buildView(layout, parseConfig({ stateDir: layout.root, repoPath: t.path }));
    expect(view.alerts).toBeUndefined();
    expect(renderTerminal(view)).not.toContain("school's own failures");
  });
});
