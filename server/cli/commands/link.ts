import { createLaunchToken } from '../../auth/keys.js';
import { runningServer } from '../../backups/instance.js';
import { withExistingDatabase } from '../context.js';
import { CommandFailed, dbPathFrom, EXIT, parseFlags, type Command } from '../usage.js';

export const linkCommand: Command = {
  name: 'link',
  usage: ['chyme link [--db FILE]'],
  run: link,
};

/**
 * `chyme link`: a fresh one-time link to the running app, for when the first was spent (a link
 * preview or a headless first visit uses it up). The running server records its URL in the shared
 * database; the token is created there too, so the server accepts it at once.
 */
async function link(argv: string[]): Promise<void> {
  const { values } = parseFlags(argv, { db: { type: 'string' } });
  const dbPath = dbPathFrom(values);
  await withExistingDatabase(dbPath, async (db) => {
    const server = runningServer(db);
    if (!server) {
      throw new CommandFailed(`No Chyme is running on ${dbPath}. Start it with: chyme serve --db ${dbPath}`, EXIT.failed);
    }
    try {
      const health = await fetch(`${server.url}/v1/health`, { signal: AbortSignal.timeout(5000) });
      if (!health.ok) throw new Error(`health check answered ${health.status}`);
    } catch (err) {
      throw new CommandFailed(`Chyme (pid ${server.pid}) should be at ${server.url} but does not answer: ${(err as Error).message}`, EXIT.failed);
    }
    process.stdout.write(`App: ${server.url}/?token=${createLaunchToken(db, Date.now())}\n`);
  });
}
