/**
 * `npm run bench [-- --only NAME[,NAME…]] [--json FILE] [--rounds N]`: runs every
 * `bench/*.bench.ts`, each benchmark warmed up once and then measured at least five times, and prints
 * one table — figure, median value, baseline, ratio, goal, met. Progress goes to stderr; the table
 * to stdout; `--json FILE` also writes the rows for comparison between commits. A benchmark that
 * throws is reported as an error row and the others still run; the exit code is then 1.
 */
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Bench, BenchFigure } from './types.js';

const here = dirname(fileURLToPath(import.meta.url));

function option(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  if (i < 0) return undefined;
  const v = args[i + 1];
  return v === undefined || v.startsWith('--') ? '' : v;
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export interface Row extends BenchFigure {
  bench: string;
  rounds: number;
  error?: string;
}

/** Median of every figure over the rounds; figures are matched by name, not by position. */
export function summarize(bench: string, results: BenchFigure[][]): Row[] {
  const rounds = results.length;
  return results[0]!.map((first) => {
    const same = results.map((r) => r.find((f) => f.figure === first.figure)).filter((f) => f !== undefined);
    const value = median(same.map((f) => f.value));
    const base = same.map((f) => f.baseline?.value).filter((v): v is number => v !== undefined);
    const baseline =
      first.baseline && base.length ? { label: first.baseline.label, value: median(base) } : undefined;
    let met: boolean | undefined;
    if (first.target) {
      const x = first.target.of === 'ratio' ? (baseline?.value ? value / baseline.value : NaN) : value;
      met = first.target.op === '<=' ? x <= first.target.value : x >= first.target.value;
    } else if (first.met !== undefined) met = same.filter((f) => f.met).length * 2 > same.length;
    const note = same.at(-1)?.note ?? first.note;
    return { ...first, value, baseline, met, note, bench, rounds };
  });
}

const fmt = (v: number) =>
  !Number.isFinite(v)
    ? String(v)
    : Math.abs(v) >= 100
      ? v.toFixed(0)
      : Math.abs(v) >= 1
        ? v.toFixed(2)
        : v.toPrecision(3);

export function renderTable(rows: readonly Row[]): string {
  const table = [
    ['figure', 'value', 'baseline', 'ratio', 'goal', 'met'],
    ...rows.map((r) =>
      r.error
        ? [`${r.bench}: ERROR`, r.error.slice(0, 80), '', '', '', '']
        : [
            r.figure,
            `${fmt(r.value)} ${r.unit}`,
            r.baseline ? `${fmt(r.baseline.value)} ${r.unit} (${r.baseline.label})` : '',
            r.baseline && r.baseline.value ? `${fmt(r.value / r.baseline.value)}×` : '',
            r.goal ?? '',
            r.met === undefined ? '' : r.met ? 'yes' : 'NO',
          ],
    ),
  ];
  const widths = table[0]!.map((_, c) => Math.max(...table.map((row) => row[c]!.length)));
  const lines = table.map((row) =>
    row
      .map((cell, c) => cell.padEnd(widths[c]!))
      .join('  ')
      .trimEnd(),
  );
  lines.splice(1, 0, widths.map((w) => '-'.repeat(w)).join('  '));
  const notes = rows.filter((r) => r.note).map((r) => `- ${r.figure}: ${r.note}`);
  return lines.join('\n') + '\n' + (notes.length ? `\nNotes:\n${notes.join('\n')}\n` : '');
}

async function main(args: string[]): Promise<number> {
  const jsonOut = args.includes('--json') ? option(args, '--json') || 'bench/results/latest.json' : undefined;
  const only = option(args, '--only')?.split(',').filter(Boolean);
  const minRounds = Math.max(5, Number(option(args, '--rounds')) || 5);
  // `--only` names files (`simulate`, `cold-start`) or single benchmarks (`simulate-24`).
  const stem = (f: string) => f.slice(0, -'.bench.ts'.length);
  const wholeFile = (f: string) => !only?.length || only.some((o) => f.includes(o));
  const files = readdirSync(here)
    .filter((f) => f.endsWith('.bench.ts'))
    .filter((f) => wholeFile(f) || only!.some((o) => o.startsWith(stem(f))))
    .sort();
  const started = performance.now();
  const elapsed = () => `${((performance.now() - started) / 1000).toFixed(1)} s`;
  const rows: Row[] = [];
  process.stderr.write(`bench: ${files.length} module(s): ${files.join(', ')}\n`);
  for (const [fi, file] of files.entries()) {
    let benches: Bench[];
    try {
      benches = ((await import(pathToFileURL(join(here, file)).href)) as { benchmarks: Bench[] }).benchmarks;
    } catch (e) {
      rows.push({ bench: file, figure: file, value: NaN, unit: '', rounds: 0, error: (e as Error).message });
      process.stderr.write(
        `bench: [${fi + 1}/${files.length}] ${file}: failed to load: ${(e as Error).message}\n`,
      );
      continue;
    }
    for (const bench of benches.filter((b) => wholeFile(file) || only!.some((o) => b.name.includes(o)))) {
      const rounds = Math.max(minRounds, bench.rounds ?? 5);
      const t0 = performance.now();
      const say = (what: string) =>
        process.stderr.write(`bench: [${fi + 1}/${files.length}] ${bench.name}: ${what} (${elapsed()})\n`);
      try {
        await bench.setup?.();
        say('warm-up');
        await bench.run();
        const results: BenchFigure[][] = [];
        for (let i = 0; i < rounds; i++) {
          results.push(await bench.run());
          say(`round ${i + 1}/${rounds}`);
        }
        rows.push(...summarize(bench.name, results));
        say(`done in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
      } catch (e) {
        rows.push({
          bench: bench.name,
          figure: bench.name,
          value: NaN,
          unit: '',
          rounds: 0,
          error: (e as Error).message,
        });
        say(`ERROR ${(e as Error).message}`);
      } finally {
        await bench.teardown?.();
      }
    }
  }
  process.stdout.write(renderTable(rows));
  process.stderr.write(`bench: total ${elapsed()}\n`);
  if (jsonOut) {
    mkdirSync(dirname(jsonOut), { recursive: true });
    writeFileSync(
      jsonOut,
      JSON.stringify({ at: new Date().toISOString(), node: process.version, rows }, null, 2) + '\n',
    );
    process.stderr.write(`bench: wrote ${jsonOut}\n`);
  }
  return rows.some((r) => r.error) ? 1 : 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.exitCode = await main(process.argv.slice(2));
}
