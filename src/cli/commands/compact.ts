import { compactLive } from '../../checkpoint/compact-live.js';
import { resolveConfig } from '../../config/load.js';
import { StateLayout } from '../../state/layout.js';
import { SCHOOL_OPTIONS, parseVerb } from '../args.js';
import type { Command } from '../commands.js';

const HELP = `Usage: school compact [--json] [--config FILE] [--state-dir DIR]

Compacts the state directory in place, as a checkpoint compacts its copy: events older than
checkpoint.compactAfterDays are folded into each log's first line, old audit and observation
records are dropped, and so are bookbags of crews that finished before then and that nothing kept
mentions. For a school that runs on one machine and never restores a checkpoint: run it now and
then (from cron, between loops); running schools keep working while it runs.

  --json           print what was compacted as JSON
  --config FILE    school.yml (default: ./school.yml when present, else the defaults)
  --state-dir DIR  compact this state directory instead of the configured one

Exit code 0, or 1 when a log could not be compacted (it is left as it was; the message says why).
`;

export const compactCommand: Command = {
  summary:
    'compact [--json]: compact the state directory in place (for a school that never restores a checkpoint)',
  async run(argv) {
    const values = parseVerb('compact', argv, { json: { type: 'boolean' }, ...SCHOOL_OPTIONS }, HELP);
    if (!values) return 0;
    const config = resolveConfig(values.config, values['state-dir'] ? { stateDir: values['state-dir'] } : {});
    const days = config.checkpoint.compactAfterDays;
    const horizon = new Date(Date.now() - days * 86_400_000);
    const result = await compactLive(new StateLayout(config.stateDir), horizon);
    if (values.json) {
      process.stdout.write(JSON.stringify({ horizon: horizon.toISOString(), ...result }, null, 2) + '\n');
    } else {
      const kib = (n: number) => `${Math.round(n / 1024)} KiB`;
      const lines = [`Compacted ${config.stateDir}: events before ${horizon.toISOString()} (${days} days)`];
      if (result.logs.length === 0) lines.push('  nothing older than that to fold');
      for (const l of result.logs) {
        const what = [
          l.folded ? `${l.folded} event(s) folded` : '',
          l.dropped ? `${l.dropped} old record(s) dropped` : '',
          l.belowWatermark ? `${l.belowWatermark} already folded event(s) dropped` : '',
        ].filter(Boolean);
        lines.push(`  ${l.file}: ${kib(l.bytesBefore)} → ${kib(l.bytesAfter)} (${what.join(', ')})`);
      }
      if (result.bookbagsRemoved) lines.push(`  bookbags: ${result.bookbagsRemoved} old one(s) removed`);
      if (result.sessionStoresRemoved)
        lines.push(
          `  session stores: ${result.sessionStoresRemoved} no revision can resume removed (${kib(result.sessionStoreBytes)})`,
        );
      for (const f of result.failed) lines.push(`  ${f.file}: NOT compacted: ${f.error}`);
      process.stdout.write(lines.join('\n') + '\n');
    }
    return result.failed.length ? 1 : 0;
  },
};
