import { describe, expect, it } from 'vitest';
import { feedbackFold, type FeedbackEvent, type FeedbackState } from '../../src/feedback/log.js';
import { issueStatuses, statusComment } from '../../src/feedback/status.js';
import { event } from '../../src/state/event-log.js';
import type { CrewRecord } from '../../src/dispatch/logs/registry.js';
import { crewRecord } from '../support/crew-record.js';

/** `feedback.jsonl` keeps trusted and ignored feedback while its pull request is open (docs/delivery.md). */
const at = (m: number) => new Date(Date.UTC(2026, 2, 1, 12, m));
const review = (id: string, pr: number, m: number) =>
  event(
    'feedback.received',
    `received:${id}`,
    {
      issue: 1,
      pr,
      kind: 'review' as const,
      id,
      author: 'maintainer',
      text: `fix ${id}`,
      headSha: 'e'.repeat(40),
    },
    at(m),
  ) as FeedbackEvent;

function fold(events: FeedbackEvent[], from: FeedbackState = feedbackFold.empty()): FeedbackState {
  return events.reduce((s, e) => feedbackFold.apply(s, e), structuredClone(from));
}

describe('the feedback fold', () => {
  it('keeps each feedback id once (the first read), ignored feedback with its reason', () => {
    const s = fold([
      review('review:1', 9, 0),
      review('review:1', 9, 5), // a later scan's copy
      event(
        'feedback.ignored',
        'ignored:comment:7',
        {
          issue: 1,
          pr: 9,
          id: 'comment:7',
          author: 'mallory',
          reason: 'mallory is NONE, not OWNER/MEMBER/COLLABORATOR',
        },
        at(6),
      ) as FeedbackEvent,
    ]);
    expect(Object.keys(s.received)).toEqual(['review:1']);
    expect(s.received['review:1']!.at).toBe(at(0).toISOString());
    expect(s.ignored['comment:7']!.reason).toContain('mallory is NONE');
  });

  it("prune drops a settled pull request's feedback and keeps an open one's; an older snapshot without the maps folds", () => {
    const s = fold([
      review('review:1', 9, 0),
      review('review:2', 10, 1),
      event(
        'pr.settled',
        'settled:9',
        { pr: 9, issue: 1, crewId: 'c1', merged: true },
        at(2),
      ) as FeedbackEvent,
    ]);
    const pruned = feedbackFold.prune(s, at(10));
    expect(Object.keys(pruned.received)).toEqual(['review:2']);
    expect(pruned.settled[9]).toBeDefined();
    const old = { cursor: {}, watched: {}, settled: {} } as unknown as FeedbackState;
    expect(Object.keys(fold([review('review:3', 10, 3)], old).received)).toEqual(['review:3']);
  });
});

describe('the status comment of a revision', () => {
  const crew = (over: Pick<CrewRecord, 'status'> & Partial<CrewRecord>) =>
    crewRecord('c2', {
      plannedAt: '2026-03-01T13:00:00Z',
      revision: {
        round: 2,
        of: 3,
        pr: 9,
        branch: 'school/issue-1',
        headSha: 'e'.repeat(40),
        revises: 'c1',
        feedback: ['review:1'],
      },
      ...over,
    });
  const inputs = (c: ReturnType<typeof crew>, extra: Record<string, unknown> = {}) => ({
    registry: { crews: { c2: c }, leases: {} } as never,
    verdicts: new Map([['c2', { accepted: true, code: 'accepted' }]]),
    deliveries: new Map(),
    ...extra,
  });

  it('says revision n of m while one runs, a branch that moved under it, and the stop after the last round', () => {
    const running = issueStatuses(inputs(crew({ status: 'running' }))).get(1)!;
    expect(statusComment(1, running)).toContain('revision 2 of 3 on pull request #9: running');
    const moved = issueStatuses(
      inputs(crew({ status: 'finished', outcome: 'succeeded', finishedAt: '2026-03-01T13:30:00Z' }), {
        notMoved: new Set(['c2']),
      }),
    ).get(1)!;
    expect(statusComment(1, moved)).toContain('someone pushed to `school/issue-1` while the revision ran');
    const stopped = issueStatuses(
      inputs(crew({ status: 'finished', outcome: 'succeeded', finishedAt: '2026-03-01T13:30:00Z' }), {
        revisionStops: new Map([[1, '3 revision round(s) of pull request #9 ran (delivery.revisions: 3)']]),
      }),
    ).get(1)!;
    expect(stopped).toEqual({
      state: 'stopped',
      reason: '3 revision round(s) of pull request #9 ran (delivery.revisions: 3)',
    });
  });
});
