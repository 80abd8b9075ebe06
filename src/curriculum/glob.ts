import picomatch from 'picomatch';

/**
 * Path globs, one syntax for classification rules, fences and the grading rubric (picomatch):
 * `*` within a segment, `**` across segments, `?` one character, `[abc]` classes and `{a,b}`
 * alternatives. Two rules on top:
 *
 * - a glob also matches everything below what it matches (`src/state` matches `src/state/lock.ts`);
 * - a glob with a wildcard and no slash matches a file name at any depth (`*.md` matches
 *   `docs/a.md`), as in `.gitignore`. A plain name without a slash (`README.md`) is a root path.
 *
 * Extglobs (`@(a|b)`) and a leading `!` (negation) are not syntax here: both are literal, which keeps
 * the fences' literal-prefix overlap check (src/dispatch/gates/fences.ts) sound. Dot files match.
 */
const OPTIONS = { dot: true, noextglob: true, nonegate: true, windows: false } as const;
const META = /[*?[{]/;

/** `./src/x`, `/src/x`, `src\\x` and `src/x/` name the same repository path as `src/x`. */
export function normalizeGlob(glob: string): string {
  let g = glob.trim().replace(/\\/g, '/');
  while (g.startsWith('./')) g = g.slice(2);
  return g
    .replace(/^\/+/, '')
    .replace(/\/{2,}/g, '/')
    .replace(/\/+$/, '');
}

/** A glob that matches a file name at any depth: a wildcard and no slash. */
export function isBasenameGlob(normalized: string): boolean {
  return !normalized.includes('/') && META.test(normalized);
}

/** A predicate over repository paths (`src/a.ts`, also `./src/a.ts`). An empty glob matches nothing. */
export function globMatcher(glob: string): (path: string) => boolean {
  const g = normalizeGlob(glob);
  if (g === '') return () => false;
  const base = isBasenameGlob(g) ? `**/${g}` : g;
  const match = picomatch([base, `${base}/**`], OPTIONS);
  return (path) => match(normalizeGlob(path));
}

/** Whether any of `globs` matches `path`. */
export function matchesAny(path: string, globs: readonly string[]): boolean {
  return globs.some((g) => globMatcher(g)(path));
}

/** Path-like tokens mentioned in text: something with a slash, or a file name with an extension. */
const CANDIDATE = /[\w@./-]*[./][\w@./-]*/g;
const PATHISH = /^(?:[\w@.-]+(?:\/[\w@.-]+)+\/?|[\w-]+\.[A-Za-z][A-Za-z0-9]{0,9})$/;
const MAX_PATHS = 200;

export function mentionedPaths(text: string): string[] {
  const out = new Set<string>();
  // Runs of path characters holding a dot or a slash, each tested anchored: much cheaper than one
  // scanning regex with lookarounds. `https://host/x` yields `//host/x`, which is not a path.
  for (const m of text.matchAll(CANDIDATE)) {
    const token = m[0].replace(/[.:]+$/, '').replace(/^\.\//, '');
    if (token.length >= 3 && PATHISH.test(token)) out.add(token);
    if (out.size >= MAX_PATHS) break;
  }
  return [...out];
}
