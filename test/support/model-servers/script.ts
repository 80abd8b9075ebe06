/**
 * What a scripted model does, step by step, in words both servers understand: each request the CLI
 * sends takes the next step (the last one repeats when the script runs out), so a turn that edits
 * and then finishes is `[{ actions: [{ write }] }, { text: 'Done.' }]`. The server turns an action
 * into the tool call the CLI offered in that request (Claude Code's Write/Bash, Codex's apply_patch,
 * shell or exec), so a script says what happens, not how a release spells it.
 */
export type Action =
  /** Write `content` to `path`, relative to the agent's working directory. */
  | { write: { path: string; content: string } }
  /** Run a command (one shell line). */
  | { shell: string }
  /** Read a file (Claude Code writes a file it has not read only when it is new). */
  | { read: string }
  /** An edit that cannot apply: replace `old` (not in the file) in `path`. */
  | { badEdit: { path: string; old: string; new: string } };

export interface Usage {
  input?: number;
  output?: number;
  cacheRead?: number;
  cacheWrite?: number;
  reasoning?: number;
}

export interface ModelStep<E extends string = string> {
  /** Tool calls made in this answer; the CLI runs them and asks again (the next step). */
  actions?: Action[];
  /** The answer's text (the final message when there are no actions). */
  text?: string;
  /** A reasoning summary before the answer (OpenAI: a `reasoning` output item). */
  reasoning?: string;
  usage?: Usage;
  /** Answer with one of the API's error forms instead. */
  error?: E;
  /** The error's message, when not the form's own. */
  message?: string;
}

export class Script<E extends string> {
  private i = 0;
  constructor(private steps: ModelStep<E>[]) {}
  next(): ModelStep<E> {
    const s = this.steps[Math.min(this.i, this.steps.length - 1)] ?? { text: 'Done.' };
    this.i++;
    return s;
  }
  /** A new script for the next turn of a test; requests so far are kept. */
  set(steps: ModelStep<E>[]): void {
    this.steps = steps;
    this.i = 0;
  }
  get taken(): number {
    return this.i;
  }
}
