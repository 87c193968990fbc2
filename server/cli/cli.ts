/**
 * The `chyme` command: finds the command module named by the first argument (commands/*.ts) and
 * hands it the rest. Every failure ends in one sentence on stderr and its exit status (usage.ts's
 * EXIT): 0 done, 1 unexpected failure, 2 usage error, 3 newer database, 4 port in use, 5 file
 * refused, 6 could not do it now.
 */
import { DatabaseReadOnlyError, DatabaseTooNewError, NotChymeDatabaseError } from '../db/connection.js';
import { ServerAlreadyRunningError } from '../backups/instance.js';
import { defaultDbPath, packageVersion } from '../paths.js';
import { backupCommand } from './commands/backup.js';
import { checkCommand } from './commands/check.js';
import { exportCommand } from './commands/export.js';
import { IMPORT_USAGE, importCommand, ImportUsageError } from './commands/import.js';
import { keysCommand } from './commands/keys.js';
import { linkCommand } from './commands/link.js';
import { mcpCommand } from './commands/mcp.js';
import { relayCommand } from './commands/relay.js';
import { restoreCommand } from './commands/restore.js';
import { serveCommand } from './commands/serve.js';
import { syncCommand } from './commands/sync.js';
import { CommandFailed, EXIT, fail, usageText, UsageError, type Command } from './usage.js';

/** For relay-cli.ts, whose bundle holds copies of these classes of its own. */
export { CommandFailed, UsageError };

/** Every command, in the order the usage text lists them. */
const COMMANDS: readonly Command[] = [
  serveCommand,
  relayCommand,
  linkCommand,
  mcpCommand,
  keysCommand,
  backupCommand,
  restoreCommand,
  exportCommand,
  { name: 'import', usage: [IMPORT_USAGE.trim()], run: importCommand },
  checkCommand,
  syncCommand,
];

const HELP = new Set(['--help', '-h', 'help']);

async function main(argv: string[]): Promise<void> {
  const [name, ...rest] = argv;
  if (name === undefined || HELP.has(name)) {
    const topic = COMMANDS.find((c) => c.name === rest[0]);
    process.stdout.write(`${topic ? usageText([topic], false) : usageText(COMMANDS)}\n`);
    return;
  }
  if (name === '--version' || name === '-v' || name === 'version') {
    process.stdout.write(`chyme ${packageVersion()}\n`);
    return;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) fail(`unknown command "${name}"`);
  // Before the command parses its flags, so that "--help" is never an unknown option.
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(`${usageText([command], false)}\n`);
    return;
  }
  await command.run(rest);
}

/** Runs one command; every failure ends the process with its exit status and a sentence. */
export async function runCli(argv: string[]): Promise<void> {
  await main(argv).catch((err: unknown) => exitOnFailure(err, argv));
}

/** The database a command line names (--db FILE or --db=FILE), for messages about it. */
function dbPathIn(argv: string[]): string {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--db' && argv[i + 1] !== undefined) return argv[i + 1]!;
    if (arg.startsWith('--db=')) return arg.slice('--db='.length);
  }
  return defaultDbPath();
}

/** What a storage fault of SQLite means for the database, and the exit status it gives. */
function storageFailure(code: string, detail: string, dbPath: string): { message: string; exit: number } {
  const base = code.split('_').slice(0, 2).join('_');
  const what = `${code}: ${detail}`;
  switch (base) {
    case 'SQLITE_CORRUPT':
      return { message: `${dbPath} is damaged (${what}). Run chyme check --db ${dbPath}, then chyme restore a backup.`, exit: EXIT.refused };
    case 'SQLITE_NOTADB':
      return { message: `${dbPath} is not a Chyme database (${what}); nothing was changed. Check --db.`, exit: EXIT.refused };
    case 'SQLITE_BUSY':
    case 'SQLITE_LOCKED':
      return { message: `${dbPath} is locked by another program (${what}); nothing was changed. Close that program and retry.`, exit: EXIT.failed };
    case 'SQLITE_READONLY':
      return { message: `${dbPath} is read-only (${what}). Make the file and its folder writable, then retry.`, exit: EXIT.failed };
    case 'SQLITE_CANTOPEN':
      return { message: `${dbPath} cannot be opened (${what}). Check that the file and its folder exist and are readable and writable.`, exit: EXIT.failed };
    case 'SQLITE_FULL':
      return { message: `The disk holding ${dbPath} is full (${what}). Free some space, then retry.`, exit: EXIT.failed };
    case 'SQLITE_IOERR':
      return { message: `The disk reported an I/O error on ${dbPath} (${what}). Check the disk.`, exit: EXIT.failed };
    default:
      return { message: `${dbPath} cannot be used now (${what}).`, exit: EXIT.failed };
  }
}

/** Ends the process for a failure of the command line `argv`: its sentence on stderr and its exit status. */
export function exitOnFailure(err: unknown, argv: string[]): never {
  const dbPath = dbPathIn(argv);
  const say = (message: string, status: number): never => {
    process.stderr.write(`chyme: ${message}\n`);
    return process.exit(status);
  };
  const code = (err as { code?: unknown } | null)?.code;
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof UsageError || err instanceof ImportUsageError || (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS'))) {
    process.stderr.write(`chyme: ${message}\n\n${usageText(COMMANDS)}\n`);
    process.exit(EXIT.usage);
  }
  if (err instanceof CommandFailed) say(message, err.exitCode);
  if (err instanceof DatabaseTooNewError) say(message, EXIT.tooNew);
  if (err instanceof NotChymeDatabaseError) say(message, EXIT.refused);
  if (err instanceof DatabaseReadOnlyError) say(message, EXIT.failed);
  if (err instanceof ServerAlreadyRunningError) say(message, EXIT.failed);
  if (typeof code === 'string' && code.startsWith('SQLITE_')) {
    const failure = storageFailure(code, message, dbPath);
    say(failure.message, failure.exit);
  }
  if (code === 'EADDRINUSE') say(`${message}. Is Chyme already running? Pick another --port, or --port 0 for a free one.`, EXIT.portInUse);
  // The file system refused (a folder where the file should be, no permission, a full disk).
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code) && (err as { syscall?: unknown }).syscall !== undefined) {
    say(`${message.replace(/\.$/, '')}; nothing was done.`, EXIT.failed);
  }
  if (process.env.CHYME_DEBUG) process.stderr.write(`${String((err as Error)?.stack ?? err)}\n`);
  return say(`unexpected error: ${message.replace(/\s+/g, ' ')} (run with CHYME_DEBUG=1 for the details)`, EXIT.unexpected);
}
