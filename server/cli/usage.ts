import { parseArgs, type ParseArgsConfig } from 'node:util';
import { SCOPES } from '../auth/scopes.js';
import { defaultDbPath } from '../paths.js';

/** A mistake in how the command was called: printed with the usage text, exit status 2. */
export class UsageError extends Error {}

/** Exit statuses beyond 0 (done). */
export const EXIT = {
  /** Something nobody foresaw: the sentence says what (CHYME_DEBUG=1 adds the stack). */
  unexpected: 1,
  /** A mistake in the command line: the message and the usage text. */
  usage: 2,
  /** The database is from a newer Chyme. */
  tooNew: 3,
  /** The port is taken. */
  portInUse: 4,
  /** A file was refused: missing, not a Chyme database, damaged. */
  refused: 5,
  /** The operation could not be done now: backup folder not writable, database in use, no running server. */
  failed: 6,
} as const;

/** A command that could not do its job, with a message for a person and its exit status. */
export class CommandFailed extends Error {
  constructor(message: string, readonly exitCode: number) {
    super(message);
  }
}

export function fail(message: string): never {
  throw new UsageError(message);
}

/** One module per command under commands/: its name, its usage lines and what it does. */
export interface Command {
  name: string;
  usage: string[];
  run(argv: string[]): void | Promise<void>;
}

/** The usage lines of these commands; the whole text also lists the scopes, the default database and --version. */
export function usageText(commands: readonly Command[], whole = true): string {
  const lines = commands.flatMap((c) => c.usage).map((l) => `  ${l}`);
  if (!whole) {
    const scopes = commands.some((c) => c.name === 'keys') ? `\nScopes: ${SCOPES.join(', ')}, or all` : '';
    return `Usage:\n${lines.join('\n')}\n${scopes}\nEvery command takes --db FILE (default: ${defaultDbPath()}) and --help.`;
  }
  return (
    `Usage:\n${lines.join('\n')}\n  chyme --version\n  chyme COMMAND --help\n\n` +
    `Scopes: ${SCOPES.join(', ')}\nDefault database: ${defaultDbPath()}`
  );
}

/** node:util parseArgs with strict checking, so a misspelt flag is a usage error. */
export function parseFlags<T extends NonNullable<ParseArgsConfig['options']>>(argv: string[], options: T, allowPositionals = false) {
  return parseArgs({ args: argv, options, allowPositionals, strict: true });
}

/** The --db flag every command takes, or the per-user default. */
export function dbPathFrom(values: { db?: string | boolean | (string | boolean)[] | undefined }): string {
  return typeof values.db === 'string' ? values.db : defaultDbPath();
}
