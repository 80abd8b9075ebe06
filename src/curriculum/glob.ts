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
const PATHISH =
  /(?:^|[\s`'"(<[])((?:\.{1,2}\/)?[\w@.-]+(?:\/[\w@.-]+)+\/?|[\w-]+\.[A-Za-z][A-Za-z0-9]{0,9})(?=$|[\s`'"),>\]:;!?])/gm;
const MAX_PATHS = 200;

export function mentionedPaths(text: string): string[] {
  const out = new Set<string>();
  for (const m of text.matchAll(PATHISH)) {
    const p = m[1]!.replace(/^\.\//, '').replace(/[.]+$/, '');
    if (p && !p.includes('://')) out.add(p);
    if (out.size >= MAX_PATHS) break;
  }
  return [...out];
}
