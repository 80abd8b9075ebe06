// Renders the generated parts of README.md from their sources, so the README cannot drift:
//   <!-- action:<name> --> … <!-- /action:<name> -->   inputs/outputs from actions/<name>/action.yml
//   <!-- cli --> … <!-- /cli -->                       the verb table of the `school` CLI
//   <!-- config --> … <!-- /config -->                 school.yml keys from the zod schema
// `--check` fails when README.md is out of date (part of `npm test`).
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { commands } from '../src/cli/commands.js';
import { configJsonSchema } from '../src/config/load.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const readmePath = join(root, 'README.md');
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

function replaceBlock(text: string, tag: string, body: string): string {
  const open = `<!-- ${tag} -->`;
  const close = `<!-- /${tag} -->`;
  const start = text.indexOf(open);
  const end = text.indexOf(close);
  if (start === -1 || end === -1 || end < start) {
    throw new Error(`README.md has no ${open} … ${close} block; add it where the generated table belongs.`);
  }
  return `${text.slice(0, start + open.length)}\n${body}\n${text.slice(end)}`;
}

const readme = readFileSync(readmePath, 'utf8');
let next = readme;
for (const name of readdirSync(join(root, 'actions')).sort()) {
  const file = join(root, 'actions', name, 'action.yml');
  if (existsSync(file))
    next = replaceBlock(
      next,
      `action:${name}`,
      renderAction(parse(readFileSync(file, 'utf8')) as ActionMeta),
    );
}
next = replaceBlock(next, 'cli', renderCli());
next = replaceBlock(next, 'config', renderConfig());

if (check) {
  if (next !== readme) {
    console.error(
      'readme: README.md is out of date with action.yml / the CLI / the config schema. Run `npm run docs` and commit.',
    );
    process.exit(1);
  }
  console.log('readme: generated tables are up to date.');
} else if (next !== readme) {
  writeFileSync(readmePath, next);
  console.log('readme: README.md updated.');
} else {
  console.log('readme: nothing to update.');
}
