/**
 * Exit codes of flowctl (documented in the README and `flowctl --help`). Scripts may rely on them.
 */
export const EXIT = {
  /** Done. */
  OK: 0,
  /** Anything else: the service refused the request (4xx not listed below), a server error, a bug. */
  ERROR: 1,
  /** Bad usage: unknown command or option, malformed `--input`, unreadable or invalid file. */
  USAGE: 2,
  /** Not signed in, the token was refused (401), or a device login was denied or expired. */
  AUTH: 3,
  /** The flow, run, workflow or terminal does not exist (or belongs to someone else): 404. */
  NOT_FOUND: 4,
  /** A run ended but not completed (failed, stopped, timed out); a workflow ended FAILED, CANCELED, TERMINATED or TIMED_OUT. */
  RUN_NOT_COMPLETED: 5,
  /** The service could not be reached (connection refused, reset, timed out) after retrying. */
  UNREACHABLE: 6,
  /** Interrupted (Ctrl-C). */
  INTERRUPTED: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** An error that ends the command with a message, a stable code and an exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode,
    readonly code: string = 'ERROR',
    readonly details?: unknown,
  ) {
    super(message);
  }
}

export const usageError = (message: string) => new CliError(message, EXIT.USAGE, 'USAGE');
