#!/usr/bin/env node
/**
 * The `chyme` command: finds the command module named by the first argument (commands/*.ts) and
 * hands it the rest. Exit statuses: 0 done, 1 unexpected failure, 2 usage error, 3 database from a
 * newer Chyme, 4 port in use.
 */
import { DatabaseTooNewError } from '../db/connection.js';
import { keysCommand } from './commands/keys.js';
import { serveCommand } from './commands/serve.js';
import { fail, usageText, UsageError, type Command } from './usage.js';

/** Every command, in the order the usage text lists them. */
const COMMANDS: readonly Command[] = [serveCommand, keysCommand];

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

main(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    process.stderr.write(`chyme: ${(err as Error).message}\n\n${usageText(COMMANDS)}\n`);
    process.exit(2);
  }
  if (err instanceof DatabaseTooNewError) {
    process.stderr.write(`chyme: ${err.message}\n`);
    process.exit(3);
  }
  if ((err as { code?: string }).code === 'EADDRINUSE') {
    process.stderr.write(`chyme: ${(err as Error).message}. Is Chyme already running? Pick another --port, or --port 0 for a free one.\n`);
    process.exit(4);
  }
  process.stderr.write(`chyme: ${String((err as Error)?.stack ?? err)}\n`);
  process.exit(1);
});
