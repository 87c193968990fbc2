/**
 * The `chyme` command: finds the command module named by the first argument (commands/*.ts) and
 * hands it the rest. Exit statuses: 0 done, 1 unexpected failure, 2 usage error, and EXIT's.
 */
import { DatabaseTooNewError } from '../db/connection.js';
import { backupCommand } from './commands/backup.js';
import { checkCommand } from './commands/check.js';
import { exportCommand } from './commands/export.js';
import { IMPORT_USAGE, importCommand, ImportUsageError } from './commands/import.js';
import { keysCommand } from './commands/keys.js';
import { linkCommand } from './commands/link.js';
import { mcpCommand } from './commands/mcp.js';
import { restoreCommand } from './commands/restore.js';
import { serveCommand } from './commands/serve.js';
import { CommandFailed, EXIT, fail, usageText, UsageError, type Command } from './usage.js';

/** What to do about a storage fault met while opening or using the database. */
const STORAGE_HINTS: Record<string, string> = {
  SQLITE_CORRUPT: 'The file is damaged: run chyme check, then chyme restore a backup.',
  SQLITE_NOTADB: 'The file is not a Chyme database: check --db.',
  SQLITE_BUSY: 'Another program holds the database locked; close it and retry.',
  SQLITE_READONLY: 'The database file or its folder is read-only; make them writable.',
  SQLITE_CANTOPEN: 'Check that the file and its folder exist and are readable and writable.',
  SQLITE_FULL: 'The disk is full; free some space.',
  SQLITE_IOERR: 'The disk reported an I/O error; check it.',
};

/** Every command, in the order the usage text lists them. */
const COMMANDS: readonly Command[] = [
  serveCommand,
  linkCommand,
  mcpCommand,
  keysCommand,
  backupCommand,
  restoreCommand,
  exportCommand,
  { name: 'import', usage: [IMPORT_USAGE.trim()], run: importCommand },
  checkCommand,
];

async function main(argv: string[]): Promise<void> {
  const [name, ...rest] = argv;
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    process.stdout.write(`${usageText(COMMANDS)}\n`);
    return;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) fail(`unknown command "${name}"`);
  await command.run(rest);
}

/** Runs one command; every failure ends the process with its exit status and a sentence. */
export async function runCli(argv: string[]): Promise<void> {
  await main(argv).catch(exitOnFailure);
}

function exitOnFailure(err: unknown): never {
  if (err instanceof UsageError || err instanceof ImportUsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    process.stderr.write(`chyme: ${(err as Error).message}\n\n${usageText(COMMANDS)}\n`);
    process.exit(2);
  }
  if (err instanceof CommandFailed) {
    process.stderr.write(`chyme: ${err.message}\n`);
    process.exit(err.exitCode);
  }
  if (err instanceof DatabaseTooNewError) {
    process.stderr.write(`chyme: ${err.message}\n`);
    process.exit(EXIT.tooNew);
  }
  const sqliteCode = (err as { code?: string }).code;
  if (typeof sqliteCode === 'string' && sqliteCode.startsWith('SQLITE_')) {
    process.stderr.write(`chyme: the database cannot be used (${sqliteCode}): ${(err as Error).message}. ${STORAGE_HINTS[sqliteCode.split('_').slice(0, 2).join('_')] ?? ''}\n`);
    process.exit(/CORRUPT|NOTADB/.test(sqliteCode) ? EXIT.refused : EXIT.failed);
  }
  if ((err as { code?: string }).code === 'EADDRINUSE') {
    process.stderr.write(`chyme: ${(err as Error).message}. Is Chyme already running? Pick another --port, or --port 0 for a free one.\n`);
    process.exit(EXIT.portInUse);
  }
  process.stderr.write(`chyme: ${String((err as Error)?.stack ?? err)}\n`);
  process.exit(1);
}
