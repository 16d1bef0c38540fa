import { CliError, EXIT } from './errors.js';
import { ApiError } from './api.js';

/** Global options every command sees. */
export interface GlobalOptions {
  url?: string;
  json?: boolean;
}

/** Human lines on stdout, or one JSON document (or JSON lines) for scripts. */
export class Output {
  constructor(readonly json: boolean) {}

  /** The command's result: `human()` for people, `data` as JSON with --json. */
  result(data: unknown, human: () => string | string[]): void {
    if (this.json) process.stdout.write(`${JSON.stringify(data)}\n`);
    else {
      const text = human();
      const lines = Array.isArray(text) ? text : [text];
      if (lines.length) process.stdout.write(`${lines.join('\n')}\n`);
    }
  }

  /** One line of a stream (events, JSON lines with --json). */
  line(data: unknown, human: () => string): void {
    process.stdout.write(this.json ? `${JSON.stringify(data)}\n` : `${human()}\n`);
  }

  /** Notes for people (progress, hints): stderr, and silent with --json. */
  note(text: string): void {
    if (!this.json) process.stderr.write(`${text}\n`);
  }
}

/** Prints an error the way the mode wants it and returns the exit code. */
export function reportError(err: unknown, json: boolean): number {
  const cli = err instanceof CliError ? err : null;
  const exitCode = cli?.exitCode ?? EXIT.ERROR;
  const code = cli?.code ?? 'INTERNAL';
  const message = err instanceof Error ? err.message : String(err);
  if (json) {
    const error: Record<string, unknown> = { code, message, exitCode };
    if (err instanceof ApiError) error.status = err.status;
    if (cli?.details !== undefined) error.details = cli.details;
    process.stderr.write(`${JSON.stringify({ error })}\n`);
  } else {
    const status = err instanceof ApiError ? ` (${err.status} ${code})` : cli && code !== 'USAGE' && code !== 'ERROR' ? ` (${code})` : '';
    process.stderr.write(`flowctl: ${message}${status}\n`);
    if (!cli && err instanceof Error && process.env.FLOWCTL_DEBUG) process.stderr.write(`${err.stack}\n`);
  }
  return exitCode;
}

/** A simple left-aligned table. */
export function table(headers: string[], rows: string[][]): string[] {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const fmt = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]))).join('  ').trimEnd();
  return [fmt(headers), ...rows.map(fmt)];
}

export const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
