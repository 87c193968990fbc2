/**
 * `chyme relay`'s own entry: main.ts loads this instead of cli.ts for that one command. The relay
 * needs its store, the protocol, better-sqlite3 and ws; the full CLI bundle holds express, zod and
 * the whole service besides, and loading it kept ~20 MB more resident for as long as the relay
 * ran (issue 27: the relay must stay under 80 MB). The CLI's own help and failure reporting are
 * loaded only when needed, so `chyme relay`'s usage text, sentences and exit statuses stay those of
 * the full CLI.
 */
import { loadCli } from './load-cli.js';
import { relayCommand } from './commands/relay.js';
import { CommandFailed, UsageError } from './usage.js';

export async function runCli(argv: string[]): Promise<void> {
  const rest = argv.slice(1);
  if (rest.includes('--help') || rest.includes('-h')) return (await loadCli()).runCli(argv);
  try {
    await relayCommand.run(rest);
  } catch (err) {
    const cli = await loadCli();
    // This entry and the CLI are bundled apart (server/cli/bundle.mjs), each with its own copy of
    // usage.ts: exitOnFailure knows a mistake by the CLI's classes.
    const failure = err instanceof UsageError ? new cli.UsageError(err.message) : err instanceof CommandFailed ? new cli.CommandFailed(err.message, err.exitCode) : err;
    cli.exitOnFailure(failure, argv);
  }
}
