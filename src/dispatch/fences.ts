/**
 * Fence disjointness (seed 003: "no two concurrently-dispatched orders may touch the same fence").
 *
 * A fence is a path glob. Deciding whether two arbitrary globs can match a common path is costly in
 * general, so the check is conservative and cheap: each glob is reduced to its *literal prefix* (the
 * text before the first glob metacharacter `* ? [ {`), and two fences overlap when one literal prefix
 * is a prefix of the other. This never misses a real overlap — any path matched by both globs starts
 * with both literal prefixes, so one is a prefix of the other — and may report a false one
 * (`src/a.ts` vs `src/a.tsx`), which only delays a crew by a cycle. A fence of `**` (empty prefix)
 * overlaps everything: the way to make an issue run alone.
 *
 * An issue with no fences claims nothing: its isolation comes from its own worktree.
 */
export function literalPrefix(glob: string): string {
  const g = normalizeFence(glob);
  const m = /[*?[{]/.exec(g);
  return m ? g.slice(0, m.index) : g;
}

/** `./src/x` and `/src/x` name the same repository path as `src/x`. */
export function normalizeFence(glob: string): string {
  let g = glob.trim().replace(/\\/g, '/');
  while (g.startsWith('./')) g = g.slice(2);
  while (g.startsWith('/')) g = g.slice(1);
  return g.replace(/\/{2,}/g, '/');
}

interface Node {
  children: Map<string, Node>;
  /** Owner of a fence whose literal prefix ends exactly here. */
  owner?: string;
  /** Owner of some fence whose prefix passes through or ends below this node. */
  below?: string;
}

export interface FenceConflict {
  fence: string;
  heldBy: string;
}

/**
 * The fences held by running and planned crews, as a character trie of literal prefixes: a lookup is
 * O(length of the glob), so checking n issues costs O(n · fence length), not O(n²).
 */
export class FenceSet {
  private readonly root: Node = { children: new Map() };

  /** The first conflict with a held fence, or undefined when every fence is free. */
  conflict(fences: readonly string[]): FenceConflict | undefined {
    for (const fence of fences) {
      if (normalizeFence(fence) === '') continue;
      const owner = this.ownerOf(literalPrefix(fence));
      if (owner !== undefined) return { fence, heldBy: owner };
    }
    return undefined;
  }

  /** Claims the fences for `owner`. Call only after `conflict()` returned undefined. */
  claim(fences: readonly string[], owner: string): void {
    for (const fence of fences) {
      if (normalizeFence(fence) === '') continue;
      const prefix = literalPrefix(fence);
      let node = this.root;
      node.below ??= owner;
      for (const ch of prefix) {
        let next = node.children.get(ch);
        if (!next) {
          next = { children: new Map() };
          node.children.set(ch, next);
        }
        node = next;
        node.below ??= owner;
      }
      node.owner ??= owner;
    }
  }

  private ownerOf(prefix: string): string | undefined {
    let node = this.root;
    if (node.owner !== undefined) return node.owner;
    for (const ch of prefix) {
      const next = node.children.get(ch);
      if (!next) return undefined;
      node = next;
      // A held fence's prefix is a prefix of this one.
      if (node.owner !== undefined) return node.owner;
    }
    // This prefix is a prefix of a held fence (or equal to one).
    return node.below;
  }
}

/** Fences as declared, without blanks; `[]` means the issue claims nothing. */
export function cleanFences(fences: readonly string[]): string[] {
  return fences.filter((f) => normalizeFence(f) !== '').map((f) => f.trim());
}
