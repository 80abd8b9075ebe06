import type { SchoolConfig } from '../config/schema.js';
import type { CurriculumItem } from '../schemas/curriculum.js';

type TrustConfig = SchoolConfig['curriculum']['trust'];

/**
 * The intake trust gate. Anyone can open an issue on a public repository, and an issue is a prompt
 * to a coding agent, so by default only issues whose author is the repository's OWNER, a MEMBER of
 * its organization or a COLLABORATOR are dispatched — or issues carrying a trigger label, which on
 * GitHub only people with triage access can apply. Returns why an issue is refused, or undefined.
 */
export function untrustedReason(
  item: Pick<CurriculumItem, 'authorAssociation' | 'labels'>,
  trust: TrustConfig,
): string | undefined {
  if (trust.anyone) return undefined;
  const association = item.authorAssociation ?? 'NONE';
  if ((trust.associations as readonly string[]).includes(association)) return undefined;
  const have = new Set(item.labels.map((l) => l.toLowerCase()));
  if (trust.labels.some((l) => have.has(l.toLowerCase()))) return undefined;
  const labels = trust.labels.length ? ` or a trigger label (${trust.labels.join(', ')})` : '';
  return (
    `its author is ${association}, not ${trust.associations.join('/')}${labels}; ` +
    'a maintainer can add a trigger label (curriculum.trust.labels) to admit it'
  );
}
