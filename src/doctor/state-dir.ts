import { accessSync, constants, existsSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Finding } from './finding.js';

/**
 * The state directory must be writable by the user the school runs as: every crew, drain and
 * checkpoint appends to its logs. A directory made by another user (a `sudo school …` once, a
 * runner that changed users) fails the first append with EACCES/EPERM, half-way through a run; the
 * doctor finds it before anything is leased. A directory not made yet must be creatable.
 */
export function checkStateDir(stateDir: string): Finding {
  const dir = resolve(stateDir);
  const fix = `give the user running school (uid ${process.getuid?.() ?? '?'}) write access (chown -R or chmod u+w), or set stateDir in school.yml to a directory it owns`;
  if (!existsSync(dir)) {
    let parent = dirname(dir);
    while (!existsSync(parent) && parent !== dirname(parent)) parent = dirname(parent);
    try {
      accessSync(parent, constants.W_OK | constants.X_OK);
      return {
        check: 'state-dir',
        status: 'ok',
        detail: `${dir} does not exist yet; ${parent} lets it be made`,
      };
    } catch {
      return {
        check: 'state-dir',
        status: 'blocker',
        detail: `${dir} does not exist and ${parent} is not writable, so it cannot be made`,
        fix,
      };
    }
  }
  if (!statSync(dir).isDirectory())
    return { check: 'state-dir', status: 'blocker', detail: `${dir} is not a directory`, fix };
  // A real write, as the school does it: permission bits do not tell about read-only mounts or ACLs.
  const probe = join(dir, `.doctor-${process.pid}.tmp`);
  try {
    writeFileSync(probe, '');
    rmSync(probe, { force: true });
  } catch (e) {
    return {
      check: 'state-dir',
      status: 'blocker',
      detail: `${dir} is not writable (${(e as NodeJS.ErrnoException).code ?? 'error'})`,
      fix,
    };
  }
  const stuck = readdirSync(dir).filter((n) => {
    try {
      accessSync(join(dir, n), constants.W_OK);
      return false;
    } catch {
      return true;
    }
  });
  if (stuck.length)
    return {
      check: 'state-dir',
      status: 'blocker',
      detail: `${dir}: ${stuck.length} entr${stuck.length === 1 ? 'y is' : 'ies are'} not writable (${stuck.slice(0, 5).join(', ')})`,
      fix,
    };
  return { check: 'state-dir', status: 'ok', detail: `${dir} is writable` };
}
