/**
 * Path globs for classification rules and fences: `*` within a segment, `**` across segments,
 * `?` one character. A glob without wildcards also matches everything below it (`src/state`
 * matches `src/state/lock.ts`).
 */
export function globToRegExp(glob: string): RegExp {
  let re = '';
  const g = glob.replace(/^\.\//, '').replace(/\/+$/, '');
  for (let i = 0; i < g.length; i++) {
    const c = g[i]!;
    if (c === '*') {
      if (g[i + 1] === '*') {
        i++;
        if (g[i + 1] === '/') {
          i++;
          re += '(?:.*/)?';
        } else re += '.*';
      } else re += '[^/]*';
    } else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}(?:/.*)?$`);
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
