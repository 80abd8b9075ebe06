// Renders the generated tables of the docs from their sources, so the docs cannot drift:
//   actions/<name>/README.md   <!-- action:<name> --> … <!-- /action:<name> -->   from actions/<name>/action.yml
//   docs/cli.md                <!-- cli --> … <!-- /cli -->                       the `school` CLI's verbs
//   docs/configuration.md      <!-- config --> … <!-- /config -->                 school.yml keys from the zod schema
// and checks that every relative link in README.md, CONTRIBUTING.md and docs/ names a file that
// exists. `--check` fails when a table is out of date or a link is broken (part of `npm test`).
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { commands } from '../src/cli/commands.js';
import { configJsonSchema } from '../src/config/load.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const check = process.argv.includes('--check');

const cell = (s: unknown) =>
  String(s ?? '')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/\|/g, '\\|');

interface ActionMeta {
  inputs?: Record<string, { description?: string; default?: unknown; required?: boolean }>;
  outputs?: Record<string, { description?: string }>;
}

function renderAction(meta: ActionMeta): string {
  const lines = ['| Input | Description | Default |', '|---|---|---|'];
  for (const [name, spec] of Object.entries(meta.inputs ?? {})) {
    const def =
      spec.default === undefined ? (spec.required ? '*required*' : '') : `\`${cell(spec.default)}\``;
    lines.push(`| \`${name}\` | ${cell(spec.description)} | ${def} |`);
  }
  lines.push('', '| Output | Description |', '|---|---|');
  for (const [name, spec] of Object.entries(meta.outputs ?? {}))
    lines.push(`| \`${name}\` | ${cell(spec.description)} |`);
  return lines.join('\n');
}

function renderCli(): string {
  const lines = ['| Command | What it does |', '|---|---|'];
  for (const [verb, c] of Object.entries(commands)) lines.push(`| \`school ${verb}\` | ${cell(c.summary)} |`);
  return lines.join('\n');
}

interface JsonSchema {
  type?: string | string[];
  description?: string;
  default?: unknown;
  enum?: unknown[];
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  minimum?: number;
  maximum?: number;
}

function typeOf(s: JsonSchema): string {
  if (s.enum) return s.enum.map((v) => `\`${String(v)}\``).join(' \\| ');
  if (s.anyOf) return s.anyOf.map(typeOf).join(' or ');
  if (s.type === 'array') return `list of ${s.items ? typeOf(s.items) : 'values'}`;
  const range =
    s.minimum !== undefined || s.maximum !== undefined ? ` (${s.minimum ?? '…'}–${s.maximum ?? '…'})` : '';
  return `${Array.isArray(s.type) ? s.type.join('/') : (s.type ?? 'value')}${range}`;
}

function renderConfig(): string {
  const lines = ['| Key | Type | Default | Description |', '|---|---|---|---|'];
  const walk = (schema: JsonSchema, prefix: string) => {
    for (const [key, s] of Object.entries(schema.properties ?? {})) {
      const path = prefix ? `${prefix}.${key}` : key;
      const isObject = s.type === 'object' && s.properties;
      const isObjectList = s.type === 'array' && s.items?.type === 'object' && s.items.properties;
      const def = s.default === undefined || isObject ? '' : `\`${cell(JSON.stringify(s.default))}\``;
      if (!isObject)
        lines.push(
          `| \`${path}\` | ${typeOf(s)} | ${def.length > 80 ? '(see schema)' : def} | ${cell(s.description)} |`,
        );
      if (isObject) walk(s, path);
      if (isObjectList) walk(s.items!, `${path}[]`);
    }
  };
  walk(configJsonSchema() as JsonSchema, '');
  return lines.join('\n');
}

function replaceBlock(path: string, text: string, tag: string, body: string): string {
  const open = `<!-- ${tag} -->`;
  const close = `<!-- /${tag} -->`;
  const start = text.indexOf(open);
  const end = text.indexOf(close);
  if (start === -1 || end === -1 || end < start) {
    throw new Error(`${path} has no ${open} … ${close} block; add it where the generated table belongs.`);
  }
  return `${text.slice(0, start + open.length)}\n${body}\n${text.slice(end)}`;
}

/** The generated blocks, by file. */
const targets = new Map<string, Array<[tag: string, body: () => string]>>();
for (const name of readdirSync(join(root, 'actions')).sort()) {
  const file = join(root, 'actions', name, 'action.yml');
  if (existsSync(file))
    targets.set(join('actions', name, 'README.md'), [
      [`action:${name}`, () => renderAction(parse(readFileSync(file, 'utf8')) as ActionMeta)],
    ]);
}
targets.set(join('docs', 'cli.md'), [['cli', renderCli]]);
targets.set(join('docs', 'configuration.md'), [['config', renderConfig]]);

const stale: string[] = [];
for (const [path, blocks] of targets) {
  const text = readFileSync(join(root, path), 'utf8');
  let next = text;
  for (const [tag, body] of blocks) next = replaceBlock(path, next, tag, body());
  if (next === text) continue;
  stale.push(path);
  if (!check) writeFileSync(join(root, path), next);
}

/** Relative links ([text](path) and [text](path#anchor)) whose file is missing. */
function brokenLinks(path: string): string[] {
  const text = readFileSync(join(root, path), 'utf8').replace(/```[\s\S]*?```/g, '');
  const out: string[] = [];
  for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = m[1]!.split('#')[0]!;
    if (!target || /^[a-z]+:/i.test(target)) continue;
    if (!existsSync(join(root, dirname(path), target))) out.push(`${path}: ${m[1]}`);
  }
  return out;
}
const docs = [
  'README.md',
  'CONTRIBUTING.md',
  ...readdirSync(join(root, 'docs'), { recursive: true })
    .map(String)
    .filter((p) => p.endsWith('.md'))
    .map((p) => join('docs', p)),
  ...[...targets.keys()].filter((p) => p.startsWith('actions')),
];
const broken = docs.flatMap(brokenLinks);

if (check) {
  if (stale.length)
    console.error(
      `docs: out of date with action.yml / the CLI / the config schema: ${stale.join(', ')}. ` +
        'Run `npm run docs` and commit.',
    );
  for (const b of broken) console.error(`docs: broken link ${b}`);
  if (stale.length || broken.length) process.exit(1);
  console.log('docs: generated tables are up to date and every relative link resolves.');
} else {
  console.log(stale.length ? `docs: updated ${stale.join(', ')}.` : 'docs: nothing to update.');
  for (const b of broken) console.error(`docs: broken link ${b}`);
}
