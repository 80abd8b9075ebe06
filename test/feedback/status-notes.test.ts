import { afterAll, describe, expect, it } from 'vitest';
import { publishStatuses } from '../../src/feedback/refresh.js';
import { feedbackLog, type CiExcused } from '../../src/feedback/log.js';
import { schoolAlerts } from '../../src/board/alerts.js';
import { ciAlerts } from '../../src/feedback/ci-alerts.js';
import { controlEvents, controlLog } from '../../src/dispatch/logs/control-log.js';
import { readRegistry } from '../../src/dispatch/logs/registry.js';
import { event } from '../../src/state/event-log.js';
import { memoryLogger } from '../../src/log.js';
import { crewAt as crew } from '../support/crew-events.js';
import { recordDelivered } from '../support/deliveries.js';
import { tempDir } from '../support/tmp.js';
import { statusIssue } from '../support/status-issue.js';
import { config } from '../grading/helpers.js';

/**
 * The status comment says what the board says of an issue beside its state (docs/crews.md,
 * "Steering and stopping a crew"; docs/delivery.md, "Failed CI"): each stop and steer people gave
 * its crews, with who and what came of it, and the failed checks of its judged commit the school
 * did not charge to the crew (flaky, or red on the base too). What people wrote is quoted as prose:
 * no markup, no mention, no link.
 */
const tmp = tempDir('school-status-notes-');
afterAll(() => tmp.cleanup());

function setup(name: string) {
  const { fake, issue, github, layout } = statusIssue(`${tmp.path}/${name}`);
  const cfg = config({ repository: 'o/r' });
  const logger = memoryLogger();
  const publish = () => publishStatuses({ config: cfg, layout, logger, github });
  const status = () => issue.comments.find((c) => c.body.includes('school-core:status'))?.body ?? '';
  return { fake, issue, github, layout, logger, publish, status };
}

const at = new Date('2026-12-01T10:05:00.000Z');

describe('the status comment shows the commands and the excused CI', () => {
  it("names who stopped or steered a crew and what came of it, quoting people's words as prose", async () => {
    const s = setup('controls');
    const n = s.issue.number;
    await crew(s.layout, 'planned', `c${n}-00000001`, n);
    await crew(s.layout, 'started', `c${n}-00000001`, n);
    await s.publish();
    expect(s.status()).toContain('running');
    expect(s.status()).not.toContain('Commands:');

    const registry = readRegistry(s.layout);
    const by = (login: string, ref: string) => ({ login, source: 'github' as const, ref, on: n });
    const steer = controlEvents(
      registry,
      n,
      {
        verb: 'steer',
        text: 'keep it <img src=x onerror=alert(1)> small, @octo/team, fixes #2 [x](https://evil.test)',
      },
      by('ann', 'comment:71'),
      at,
    );
    const stop = controlEvents(
      registry,
      n,
      { verb: 'stop', reason: 'wrong **approach**' },
      by('bob', 'comment:72'),
      new Date(at.getTime() + 60_000),
    );
    const steerKey = steer.events.find((e) => e.type === 'crew.steered')!.key;
    await controlLog(s.layout).append([
      ...steer.events,
      event(
        'crew.steer-delivered',
        `steer-delivered:${steerKey}`,
        { steer: steerKey, crewId: `c${n}-00000001`, turn: 1 },
        at,
      ),
      ...stop.events,
    ]);
    await s.publish();
    const body = s.status();
    expect(body).toContain('Commands:');
    const lines = body.split('\n').filter((l) => l.startsWith('- '));
    // Oldest first, each with who (named in code, never mentioned) and what came of it.
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^- Steer by `@ann` \(crew `c\d+-00000001`\): “.*” — delivered to turn 1$/);
    expect(lines[1]).toMatch(/^- Stop by `@bob` \(crew `c\d+-00000001`\): “.*” — requested$/);
    // The person's words are text: no tag, no bold, no link, no mention, no closing keyword.
    expect(body).not.toContain('<img');
    expect(body).not.toContain('**approach**');
    expect(body).not.toContain('](https://');
    expect(body).not.toMatch(/(^|[^`])@octo\/team/);
    expect(body).not.toMatch(/fixes #2/i);
    expect(lines[0]).toContain('small');

    // The same state renders the same body: nothing is written again.
    const before = s.fake.requests.length;
    expect(await s.publish()).toEqual({ recorded: [], delivered: 0 });
    expect(s.fake.requests.length).toBe(before);
  });

  it('says which failed checks of the judged commit were flaky or red on the base, in the alert’s words', async () => {
    const s = setup('ci');
    const n = s.issue.number;
    const crewId = `c${n}-00000001`;
    await crew(s.layout, 'planned', crewId, n);
    await crew(s.layout, 'finished', crewId, n);
    const judged = 'a'.repeat(40);
    await recordDelivered(s.layout, { issue: n, crewId, pr: 40, sha: judged });
    const x = (sha: string, check: string, outcome: CiExcused['outcome']): CiExcused => ({
      pr: 40,
      issue: n,
      crewId,
      sha,
      check,
      outcome,
      ...(outcome === 'base-broken' ? { baseSha: 'b'.repeat(40) } : {}),
    });
    const excused = [
      x(judged, 'ci / test <b>x</b>', 'flaky'),
      x(judged, 'lint', 'base-broken'),
      // An older head's: the status speaks of the judged commit.
      x('c'.repeat(40), 'old-check', 'flaky'),
    ];
    await feedbackLog(s.layout).append(
      excused.map((e, i) =>
        event('ci.excused', `excused:${e.sha}:${e.check}`, e, new Date(at.getTime() + i * 1000)),
      ),
    );
    await s.publish();
    const body = s.status();
    expect(body).toContain('CI not charged to the crew:');
    const lines = body.split('\n').filter((l) => l.startsWith('- '));
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain(
      'failed, then passed when its jobs were rerun: flaky CI, not charged to the crew',
    );
    expect(lines[1]).toContain('the base is broken, not charged to the crew');
    expect(body).not.toContain('old-check');
    // The check's name is the repository's text: shown, never markup.
    expect(body).not.toContain('<b>');
    expect(lines[0]).toContain('ci / test');

    // The board says the same, in the same words (its alert lines).
    await ciAlerts(s.layout, s.logger, { excused: excused.slice(0, 2) });
    const board = schoolAlerts(s.layout).map((a) => a.detail);
    expect(board).toEqual(
      expect.arrayContaining([
        expect.stringContaining('flaky CI, not charged to the crew'),
        expect.stringContaining('the base is broken, not charged to the crew'),
      ]),
    );
  });
});
