import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { untrustedReason } from '../../src/curriculum/trust.js';
import { buildItem } from '../../src/curriculum/classify.js';
import { rawIssueSchema } from '../../src/curriculum/issue-shape.js';

const trust = (over: unknown = {}) => parseConfig({ curriculum: { trust: over } }, 't').curriculum.trust;

describe('intake trust gate', () => {
  it.each([
    ['OWNER', true],
    ['MEMBER', true],
    ['COLLABORATOR', true],
    ['CONTRIBUTOR', false],
    ['FIRST_TIME_CONTRIBUTOR', false],
    ['FIRST_TIMER', false],
    ['MANNEQUIN', false],
    ['NONE', false],
    [undefined, false],
  ])('author_association %s → dispatched: %s', (association, dispatched) => {
    const reason = untrustedReason({ authorAssociation: association, labels: [] }, trust());
    expect(reason === undefined).toBe(dispatched);
    if (reason) expect(reason).toMatch(new RegExp(`author is ${association ?? 'NONE'}`));
  });

  it('a trigger label admits an outsider, case-insensitively', () => {
    const t = trust({ labels: ['school:go'] });
    expect(untrustedReason({ authorAssociation: 'NONE', labels: ['School:Go'] }, t)).toBeUndefined();
    expect(untrustedReason({ authorAssociation: 'NONE', labels: ['other'] }, t)).toMatch(
      /trigger label \(school:go\)/,
    );
  });

  it('anyone: true is the explicit opt-out; associations can be widened', () => {
    expect(untrustedReason({ labels: [] }, trust({ anyone: true }))).toBeUndefined();
    expect(
      untrustedReason(
        { authorAssociation: 'CONTRIBUTOR', labels: [] },
        trust({ associations: ['OWNER', 'CONTRIBUTOR'] }),
      ),
    ).toBeUndefined();
  });

  it('rejects an unknown association with the valid values', () => {
    expect(() => trust({ associations: ['ADMIN'] })).toThrow(/OWNER/);
  });

  it('the curriculum keeps the association GitHub sent, and a change of it changes the fingerprint', () => {
    const config = parseConfig({}, 't').curriculum;
    const raw = (a?: string) =>
      rawIssueSchema.parse({ number: 1, title: 't', body: 'b', author_association: a });
    const member = buildItem(raw('MEMBER'), config).item;
    expect(member.authorAssociation).toBe('MEMBER');
    expect(buildItem(raw('NONE'), config).item.fingerprint).not.toBe(member.fingerprint);
    expect(buildItem(raw('not an association'), config).item.authorAssociation).toBeUndefined();
  });
});
