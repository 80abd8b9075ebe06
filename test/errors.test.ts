import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, SchoolError } from '../src/errors.js';
import { AbortCrew } from '../src/crew/run/crew-brief.js';
import { LoopStoppedError } from '../src/loop/stop.js';
import { DeliveredTreeError, DeliveryRefusedError } from '../src/delivery/errors.js';

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** Every error class the school declares, with its base and the code it sets (if any). */
function errorClasses() {
  const found: Array<{ file: string; name: string; base: string; code?: string }> = [];
  for (const file of [...sources('src'), ...sources('lab')]) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(
      /class (\w+) extends (\w+) \{\n(?:\s*override readonly code(?:: ErrorCode)? = '([^']+)';)?/g,
    ))
      if (/Error$/.test(m[2]!) || m[2] === 'SchoolError' || /Error$/.test(m[1]!))
        found.push({ file, name: m[1]!, base: m[2]!, code: m[3] });
  }
  return found;
}

describe('one error hierarchy (src/errors.ts)', () => {
  it('no error class of the school extends Error itself, and every code a class sets is listed in ERROR_CODES', () => {
    const classes = errorClasses();
    expect(classes.length).toBeGreaterThan(30);
    expect(classes.filter((c) => c.base === 'Error' && c.name !== 'SchoolError').map((c) => c.name)).toEqual(
      [],
    );
    expect(
      classes.filter((c) => c.code && !(c.code in ERROR_CODES)).map((c) => `${c.name}: ${c.code}`),
    ).toEqual([]);
  });

  it('a thrown school error carries its own code and stays an instance of its bases', () => {
    const abort = new AbortCrew('agent beta is not configured');
    expect(abort).toBeInstanceOf(SchoolError);
    expect(abort.code).toBe('crew-aborted');
    expect(new LoopStoppedError('SIGTERM').code).toBe('loop-stopped');
    const tree = new DeliveredTreeError('tree differs');
    expect(tree).toBeInstanceOf(DeliveryRefusedError);
    expect(tree.code).toBe('delivered-tree');
  });
});
