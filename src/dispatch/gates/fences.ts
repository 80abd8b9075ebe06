import { isBasenameGlob } from '../../curriculum/glob.js';

/**
 * Fence disjointness (seed 003: "no two concurrently-dispatched orders may touch the same fence").
 *
 * A fence is a path glob (the syntax of src/curriculum/glob.ts: braces and classes included). Deciding whether two arbitrary globs can match a common path is costly in
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
  return prefixOf(normalizeFence(glob));
}

/** `./src/x` and `/src/x` name the same repository path as `src/x`. */
export function normalizeFence(glob: string): string {
  // Fast path without a regex: most fences are already normal, and this runs for every fence of
  // every candidate.
  const first = glob.charCodeAt(0);
  const last = glob.charCodeAt(glob.length - 1);
  if (
    glob.length > 0 &&
    first !== 46 /* . */ &&
    first !== 47 /* / */ &&
    first > 32 &&
    last > 32 &&
    glob.indexOf('\\') === -1 &&
    glob.indexOf('//') === -1 &&
    !/\s/.test(glob[0]!) &&
    !/\s/.test(glob[glob.length - 1]!)
  ) {
    return glob;
  }
  let g = glob.trim().replace(/\\/g, '/');
  while (g.startsWith('./')) g = g.slice(2);
  while (g.startsWith('/')) g = g.slice(1);
  return g.replace(/\/{2,}/g, '/');
}

/**
 * A radix-trie node: `label` is the edge text from the parent. Unique tails stay one leaf edge, so a
 * batch of n fences allocates O(n) nodes rather than one per character.
 */
interface Node {
  label: string;
  children?: Map<string, Node>;
  /** Owner of a fence whose literal prefix ends exactly here. */
  owner?: FenceOwner;
  /** Owner of some fence whose prefix ends here or below. */
  below?: FenceOwner;
}

/** Who holds a fence: a label, or an issue number admitted in the current batch (formatted lazily). */
export type FenceOwner = string | number;

export interface FenceConflict {
  fence: string;
  heldBy: FenceOwner;
}

/**
 * The fences held by running and planned crews, as a radix trie of literal prefixes: a lookup or a
 * claim is O(length of the glob), so checking n issues costs O(n · fence length), not O(n²).
 */
export class FenceSet {
  private readonly root: Node = { label: '' };

  /** The first conflict with a held fence, or undefined when every fence is free. */
  conflict(fences: readonly string[]): FenceConflict | undefined {
    for (const fence of fences) {
      const g = normalizeFence(fence);
      if (g === '') continue;
      const owner = this.ownerOf(prefixOf(g));
      if (owner !== undefined) return { fence, heldBy: owner };
    }
    return undefined;
  }

  /** Claims the fences for `owner` (overlapping claims are allowed: held fences are not re-judged). */
  claim(fences: readonly string[], owner: FenceOwner): void {
    for (const fence of fences) {
      const g = normalizeFence(fence);
      if (g !== '') this.insert(prefixOf(g), owner);
    }
  }

  /**
   * Checks, then claims when free: one pass over the fences for the common case. A fence `owner`
   * itself holds is free to it: the crews of one contest (./contest.ts) share their issue's fences.
   * That never hides another owner: a claim is only made where nothing of anyone else overlaps.
   */
  tryClaim(fences: readonly string[], owner: FenceOwner): FenceConflict | undefined {
    if (fences.length === 0) return undefined;
    if (fences.length === 1) {
      const g = normalizeFence(fences[0]!);
      if (g === '') return undefined;
      const p = prefixOf(g);
      const held = this.ownerOf(p);
      if (held !== undefined && held !== owner) return { fence: fences[0]!, heldBy: held };
      this.insert(p, owner);
      return undefined;
    }
    const prefixes: string[] = [];
    for (const fence of fences) {
      const g = normalizeFence(fence);
      if (g === '') continue;
      const p = prefixOf(g);
      const held = this.ownerOf(p);
      if (held !== undefined && held !== owner) return { fence, heldBy: held };
      prefixes.push(p);
    }
    for (const p of prefixes) this.insert(p, owner);
    return undefined;
  }

  private ownerOf(p: string): FenceOwner | undefined {
    let node = this.root;
    if (node.owner !== undefined) return node.owner;
    let i = 0;
    for (;;) {
      // Everything claimed at or below here has `p` as a prefix.
      if (i === p.length) return node.below;
      const child = node.children?.get(p[i]!);
      if (!child) return undefined;
      const label = child.label;
      const k = common(p, i, label);
      if (k < label.length) return i + k === p.length ? child.below : undefined;
      i += k;
      node = child;
      // A held fence's prefix ends here: it is a prefix of `p`.
      if (node.owner !== undefined) return node.owner;
    }
  }

  private insert(p: string, owner: FenceOwner): void {
    let node = this.root;
    node.below ??= owner;
    let i = 0;
    while (i < p.length) {
      const ch = p[i]!;
      let child = node.children?.get(ch);
      if (!child) {
        (node.children ??= new Map()).set(ch, { label: p.slice(i), owner, below: owner });
        return;
      }
      const k = common(p, i, child.label);
      if (k < child.label.length) {
        const tail = child.label.slice(k);
        const mid: Node = { label: child.label.slice(0, k), children: new Map([[tail[0]!, child]]) };
        if (child.below !== undefined) mid.below = child.below;
        child.label = tail;
        node.children!.set(ch, mid);
        child = mid;
      }
      child.below ??= owner;
      node = child;
      i += k;
    }
    node.owner ??= owner;
  }
}

function prefixOf(normal: string): string {
  // A wildcard without a slash matches a file name at any depth (`*.md` is docs/a.md too): it has
  // no literal prefix (src/curriculum/glob.ts, the matcher these fences are checked with).
  if (isBasenameGlob(normal)) return '';
  const m = /[*?[{]/.exec(normal);
  return m ? normal.slice(0, m.index) : normal;
}

function common(p: string, at: number, label: string): number {
  const n = Math.min(label.length, p.length - at);
  let k = 0;
  while (k < n && p.charCodeAt(at + k) === label.charCodeAt(k)) k++;
  return k;
}

/** Fences as declared, without blanks; `[]` means the issue claims nothing. */
export function cleanFences(fences: readonly string[]): string[] {
  return fences.filter((f) => normalizeFence(f) !== '').map((f) => f.trim());
}
