import { parseConfig } from '../../src/config/load.js';
import { feedbackFold, type FeedbackState } from '../../src/feedback/log.js';
import { scanFeedback, type Delivered, type ScanOptions } from '../../src/feedback/scan.js';
import type { GitHubClient } from '../../src/github/client.js';
import { octokitFeedback } from '../../src/github/feedback-port.js';

/**
 * The feedback scan of repository o/r as the loop runs it, scan after scan, its state folded
 * between them: everything collected, the default trust, no bots, asked since the end of 2025.
 * `over` (asked at each scan) replaces any of its options. With `received`, each feedback record a
 * scan returns is folded as the loop records it (`feedback.received`), so the next scan knows its id.
 */
export function feedbackScanner(
  client: GitHubClient,
  delivered: Delivered[],
  over: () => Partial<ScanOptions> = () => ({}),
  o: { received?: boolean } = {},
): { scan(): ReturnType<typeof scanFeedback>; state(): FeedbackState } {
  let state: FeedbackState = feedbackFold.empty();
  const scan = async () => {
    const r = await scanFeedback({
      port: octokitFeedback(client, 'o/r'),
      state,
      delivered,
      collect: 'all',
      trust: parseConfig({}).curriculum.trust,
      bots: [],
      firstSince: '2025-12-31T00:00:00Z',
      now: new Date(),
      ...over(),
    });
    for (const e of r.events) state = feedbackFold.apply(state, e);
    if (o.received)
      for (const f of r.feedback)
        state = feedbackFold.apply(state, {
          type: 'feedback.received',
          key: f.id,
          at: new Date().toISOString(),
          data: f,
        } as never);
    return r;
  };
  return { scan, state: () => state };
}
