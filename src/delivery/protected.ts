import type { SchoolConfig } from '../config/schema.js';
import { configSource } from '../config/source.js';
import { runGit } from '../process/git.js';
import { DeliveryError, DeliveryRefusedError } from './errors.js';
import { protectedPaths } from './protected-paths.js';

/**
 * Protected paths checked again on the commit delivery is about to push (docs/delivery.md): the
 * policy judge refused them in the patch it graded, but what reaches the remote is this commit's
 * tree, whatever judged it — a verdict from an older school, a bookbag graded elsewhere, a judge
 * someone switched off. Compared tree to tree (`git diff-tree`, both sides of a rename, no
 * quoting), so the paths are the ones the push would write.
 */
export async function refuseProtectedPaths(
  config: SchoolConfig,
  o: { baseSha: string; sha: string; fences: readonly string[] },
): Promise<void> {
  const r = await runGit(['diff-tree', '-r', '-z', '--no-renames', '--name-only', o.baseSha, o.sha, '--'], {
    cwd: config.repoPath,
    timeoutMs: 120_000,
  });
  if (r.exitCode !== 0 || r.overflowed)
    throw new DeliveryError(
      `could not list what commit ${o.sha.slice(0, 12)} changes: ${(r.spawnError ?? r.stderr.toString('utf8')).trim().slice(0, 300)}`,
    );
  const paths = r.stdout.toString('utf8').split('\0').filter(Boolean);
  const guard = protectedPaths({
    repoPath: config.repoPath,
    configFile: configSource(config),
    allow: config.grading.allowProtected,
    fences: o.fences,
  });
  const refused = paths.filter((p) => guard.refused(p));
  if (refused.length > 0)
    throw new DeliveryRefusedError(
      `the change touches protected path(s) ${refused.slice(0, 10).join(', ')}: workflows, the school's configuration, git attributes and package-manager or CI settings are never pushed by the school unless the issue's fences or grading.allowProtected name them`,
    );
}
