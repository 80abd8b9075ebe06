import { data, Evaluator, Lexer, Parser } from '@actions/expressions';

export type Json = Record<string, unknown>;

/** The status functions a job's condition may call. */
export const STATUS = ['success', 'failure', 'cancelled', 'always'] as const;

/**
 * `expression` evaluated by GitHub's expression engine against `context`; a status function
 * answers as `status` says (`always()` is true unless it says otherwise, the others false).
 */
export function evaluate(
  expression: string,
  context: Json,
  status: Record<string, boolean> = {},
): data.ExpressionData {
  const lexed = new Lexer(expression).lex();
  const infos = STATUS.map((name) => ({ name, minArgs: 0, maxArgs: 0 }));
  const tree = new Parser(lexed.tokens, Object.keys(context), infos).parse();
  const ctx = JSON.parse(JSON.stringify(context), data.reviver) as data.Dictionary;
  const functions = new Map(
    STATUS.map((name) => [
      name,
      { name, minArgs: 0, maxArgs: 0, call: () => new data.BooleanData(status[name] ?? name === 'always') },
    ]),
  );
  return new Evaluator(tree, ctx, functions).evaluate();
}

/** A string with `${{ }}` parts, as GitHub interpolates it. */
export function interpolate(text: string, context: Json, status: Record<string, boolean> = {}): string {
  return text.replace(/\$\{\{([\s\S]*?)\}\}/g, (_, expr: string) =>
    evaluate(expr.trim(), context, status).coerceString(),
  );
}
