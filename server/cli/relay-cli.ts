/**
 * `chyme relay`'s own entry: main.ts loads this instead of cli.ts for that one command. The relay
 * needs its store, the protocol, better-sqlite3 and ws; the full CLI bundle holds express, zod and
 * the whole service besides, and loading it kept ~20 MB more resident for as long as the relay
 * ran (issue 27: the relay must stay under 80 MB). The CLI's own help and failure reporting are
 * loaded only when needed, so `chyme relay`'s usage text, sentences and exit statuses stay those of
 * the full CLI.
 */
import { relayCommand } from './commands/relay.js';

export async function runCli(argv: string[]): Promise<void> {
  const rest = argv.slice(1);
  if (rest.includes('--help') || rest.includes('-h')) return (await import('./cli.js')).runCli(argv);
  try {
    await relayCommand.run(rest);
  } catch (err) {
    (await import('./cli.js')).exitOnFailure(err, argv);
  }
}
