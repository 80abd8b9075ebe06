import { readdirSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Bench, BenchFigure } from './types.js';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const jsonOut = args.includes('--json')
  ? (args[args.indexOf('--json') + 1] ?? 'bench/results/latest.json')
  : undefined;
const only = args.includes('--only') ? args[args.indexOf('--only') + 1] : undefined;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

const files = readdirSync(here).filter((f) => f.endsWith('.bench.ts') && (!only || f.includes(only)));
const rows: Array<BenchFigure & { bench: string; rounds: number }> = [];
for (const file of files.sort()) {
  const mod = (await import(pathToFileURL(join(here, file)).href)) as { benchmarks: Bench[] };
  for (const bench of mod.benchmarks) {
    process.stderr.write(`bench: ${bench.name} …\n`);
    await bench.run(); // warm-up
    const rounds = Math.max(5, bench.rounds ?? 5);
    const results: BenchFigure[][] = [];
    for (let i = 0; i < rounds; i++) results.push(await bench.run());
    for (const [i, first] of results[0]!.entries()) {
      const values = results.map((r) => r[i]!.value);
      const baselines = results.map((r) => r[i]!.baseline?.value).filter((v): v is number => v !== undefined);
      const value = median(values);
      const last = results.at(-1)![i]!;
      rows.push({
        ...first,
        value,
        baseline: first.baseline ? { label: first.baseline.label, value: median(baselines) } : undefined,
        met: last.met === undefined ? undefined : results.filter((r) => r[i]!.met).length * 2 > rounds,
        bench: bench.name,
        rounds,
      });
    }
  }
}

const fmt = (v: number) =>
  Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 1 ? v.toFixed(2) : v.toPrecision(3);
const table = [
  ['figure', 'value', 'baseline', 'ratio', 'goal', 'met'],
  ...rows.map((r) => [
    r.figure,
    `${fmt(r.value)} ${r.unit}`,
    r.baseline ? `${fmt(r.baseline.value)} ${r.unit} (${r.baseline.label})` : '',
    r.baseline && r.baseline.value ? `${fmt(r.value / r.baseline.value)}×` : '',
    r.goal ?? '',
    r.met === undefined ? '' : r.met ? 'yes' : 'NO',
  ]),
];
const widths = table[0]!.map((_, c) => Math.max(...table.map((row) => row[c]!.length)));
for (const [i, row] of table.entries()) {
  process.stdout.write(row.map((cell, c) => cell.padEnd(widths[c]!)).join('  ') + '\n');
  if (i === 0) process.stdout.write(widths.map((w) => '-'.repeat(w)).join('  ') + '\n');
}
if (jsonOut) {
  mkdirSync(dirname(jsonOut), { recursive: true });
  writeFileSync(
    jsonOut,
    JSON.stringify({ at: new Date().toISOString(), node: process.version, rows }, null, 2),
  );
  process.stderr.write(`bench: wrote ${jsonOut}\n`);
}
