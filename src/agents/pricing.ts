import type { Pricing } from '../config/schema.js';
import type { MeteredUsage, ModelApi } from '../sandbox/index.js';
import { priceTokens } from './ending.js';

/**
 * The prices the key proxy's meter counts a crew's spend with (src/sandbox/meter.ts): USD per
 * million tokens per model, `sandbox.keyProxy.prices` over these built-in list prices. A model is
 * found by its name or the longest entry its name begins with (`claude-sonnet-4-5-20250929` is
 * `claude-sonnet-4-5`). A model no entry names is priced at the most expensive known rate of its
 * provider, field by field (an alert says so), never as free: a student that names a model the
 * table lacks pays the most, and the operator adds the model's price.
 */

/** When the built-in prices were taken from the providers' pricing pages (docs/security.md). */
export const PRICES_TAKEN = '2025-11-24';

const anthropic = (input: number, output: number): Pricing => ({
  inputPerMTok: input,
  outputPerMTok: output,
  // The prompt cache: a 5-minute write costs 1.25× input, a read 0.1× input.
  cacheWritePerMTok: round(input * 1.25),
  cachedInputPerMTok: round(input * 0.1),
});
const openai = (input: number, cached: number, output: number): Pricing => ({
  inputPerMTok: input,
  cachedInputPerMTok: cached,
  outputPerMTok: output,
});

/** List prices (standard tier, prompts up to 200k tokens) as of PRICES_TAKEN. */
export const DEFAULT_PRICES: Readonly<Record<string, Pricing>> = {
  'claude-opus-4-5': anthropic(5, 25),
  'claude-opus-4-1': anthropic(15, 75),
  'claude-opus-4': anthropic(15, 75),
  'claude-sonnet-4-5': anthropic(3, 15),
  'claude-sonnet-4': anthropic(3, 15),
  'claude-3-7-sonnet': anthropic(3, 15),
  'claude-haiku-4-5': anthropic(1, 5),
  'claude-3-5-haiku': anthropic(0.8, 4),
  'claude-3-haiku': anthropic(0.25, 1.25),
  'gpt-5.1': openai(1.25, 0.125, 10),
  'gpt-5.1-codex': openai(1.25, 0.125, 10),
  'gpt-5.1-codex-max': openai(1.25, 0.125, 10),
  'gpt-5.1-codex-mini': openai(0.25, 0.025, 2),
  'gpt-5': openai(1.25, 0.125, 10),
  'gpt-5-codex': openai(1.25, 0.125, 10),
  'gpt-5-mini': openai(0.25, 0.025, 2),
  'gpt-5-nano': openai(0.05, 0.005, 0.4),
  'gpt-5-pro': openai(15, 15, 120),
  'gpt-4.1': openai(2, 0.5, 8),
  'gpt-4.1-mini': openai(0.4, 0.1, 1.6),
  'gpt-4.1-nano': openai(0.1, 0.025, 0.4),
  'gpt-4o': openai(2.5, 1.25, 10),
  'gpt-4o-mini': openai(0.15, 0.075, 0.6),
  o3: openai(2, 0.5, 8),
  'o3-pro': openai(20, 20, 80),
  'o3-mini': openai(1.1, 0.55, 4.4),
  'o4-mini': openai(1.1, 0.275, 4.4),
  'codex-mini-latest': openai(1.5, 0.375, 6),
};

/** The provider a table entry belongs to: Claude models are Anthropic's, the rest OpenAI's. */
export function providerOf(model: string): ModelApi {
  return /^(anthropic\.)?claude/i.test(model) ? 'anthropic' : 'openai';
}

export interface PricedUsage {
  usd: number;
  /** The table entry that priced it, or undefined when the model was unknown. */
  entry?: string;
  /** The model had no price: it was priced at its provider's most expensive rate (say so). */
  unknown?: string;
}

/** The built-in prices with the configured ones over them. */
export function priceTable(configured: Readonly<Record<string, Pricing>> = {}): Record<string, Pricing> {
  return { ...DEFAULT_PRICES, ...configured };
}

/** The entry a model's name selects: its own, else the longest entry its name begins with. */
export function priceEntry(table: Readonly<Record<string, Pricing>>, model: string): string | undefined {
  const name = model.toLowerCase().replace(/^anthropic\./, '');
  const keys = Object.keys(table);
  const own = keys.find((k) => k.toLowerCase() === name);
  if (own) return own;
  return keys
    .filter((k) => name.startsWith(k.toLowerCase()) && /^[-.@:_]/.test(name.slice(k.length)))
    .sort((a, b) => b.length - a.length)[0];
}

/** The most expensive known rate of a provider, each price the largest of its entries. */
export function dearestRate(table: Readonly<Record<string, Pricing>>, api: ModelApi): Pricing {
  const own = Object.entries(table)
    .filter(([k]) => providerOf(k) === api)
    .map(([, p]) => p);
  const all = own.length ? own : Object.values(table);
  const max = (f: (p: Pricing) => number) => Math.max(0, ...all.map(f));
  return {
    inputPerMTok: max((p) => p.inputPerMTok),
    cachedInputPerMTok: max((p) => p.cachedInputPerMTok),
    cacheWritePerMTok: max((p) => p.cacheWritePerMTok ?? p.inputPerMTok),
    outputPerMTok: max((p) => p.outputPerMTok),
  };
}

/** One answer's usage in USD. */
export function priceUsage(u: MeteredUsage, table: Readonly<Record<string, Pricing>>): PricedUsage {
  const entry = u.model ? priceEntry(table, u.model) : undefined;
  const pricing = entry ? table[entry]! : dearestRate(table, u.api);
  const usd =
    priceTokens(
      { input: u.input, output: u.output, cachedInput: u.cachedInput, cacheCreation: u.cacheCreation },
      pricing,
    ) ?? 0;
  return { usd, ...(entry ? { entry } : { unknown: u.model ?? '(no model named)' }) };
}

function round(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}
