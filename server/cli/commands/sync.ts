import { runningServer, serverAnswers } from '../../backups/instance.js';
import type { Db } from '../../db/connection.js';
import { ConflictError, InvalidInputError, UpstreamError } from '../../domain-errors.js';
import { createSync, decodePairingCode, type SyncSubsystem } from '../../sync/index.js';
import type { SyncStatus } from '../../sync/schemas.js';
import { commandContext, ensureSettings, openCommandDatabase } from '../context.js';
import { CommandFailed, dbPathFrom, EXIT, fail, parseFlags, type Command } from '../usage.js';

export const syncCommand: Command = {
  name: 'sync',
  usage: [
    'chyme sync init --relay URL --token T [--name NAME] [--db FILE]   (prints a pairing code on its last line)',
    'chyme sync join CODE [--name NAME] [--db FILE]',
    'chyme sync status [--json] [--db FILE]',
    'chyme sync leave [--db FILE]',
  ],
  run: sync,
};

/**
 * `chyme sync …`: set up, join, inspect and leave sync on a database that is not being served (a
 * running app or `chyme serve` does the same from Integrations → Sync or /v1/sync). Once set up,
 * `chyme serve` and the desktop app sync continuously.
 */
async function sync(argv: string[]): Promise<void> {
  const [sub, ...rest] = argv;
  const { values, positionals } = parseFlags(
    rest,
    { relay: { type: 'string' }, token: { type: 'string' }, name: { type: 'string' }, db: { type: 'string' }, json: { type: 'boolean' } },
    true,
  );
  const dbPath = dbPathFrom(values);
  switch (sub) {
    case 'init': {
      if (!values.relay) fail('sync init needs --relay ws://HOST:PORT (the address chyme relay printed)');
      if (!values.token) fail('sync init needs --token T (the token chyme relay printed)');
      if (positionals.length > 0) fail(`unexpected argument "${positionals[0]}"`);
      await withSync(dbPath, true, async (s, db) => {
        const status = await s.setup({ relay: values.relay!, token: values.token!, name: values.name });
        const code = s.pairingCode();
        process.stdout.write(`Sync is on for ${dbPath}: this device is "${status.device_name}" (${status.device_id}) and sends the webhooks.\n`);
        process.stdout.write(`Relay: ${status.relay}. ${recordCounts(db)} are in the history.\n`);
        if (status.pending_changes > 0) process.stdout.write(`The relay has not confirmed ${status.pending_changes} change(s) yet; chyme serve will send them.\n`);
        process.stdout.write('On the other computer run: chyme sync join CODE (or paste the code in Integrations → Sync). The code is a password. Pairing code:\n');
        process.stdout.write(`${code}\n`);
      });
      return;
    }
    case 'join': {
      const code = positionals[0];
      if (!code) fail('sync join needs the pairing code: chyme sync join CODE');
      if (positionals.length > 1) fail(`unexpected argument "${positionals[1]}"`);
      // A code that is no code is refused before any database is opened (or made).
      try {
        decodePairingCode(code);
      } catch (err) {
        throw new CommandFailed((err as Error).message, EXIT.usage);
      }
      await withSync(dbPath, true, async (s, db) => {
        const status = await s.join({ pairing_code: code, name: values.name });
        const host = status.webhook_host?.device_name ?? 'no device';
        process.stdout.write(`Joined: this device is "${status.device_name}" (${status.device_id}) on ${status.relay}.\n`);
        process.stdout.write(`${recordCounts(db)} are on this device now. Webhooks are sent by ${host}.\n`);
      });
      return;
    }
    case 'status': {
      if (positionals.length > 0) fail(`unexpected argument "${positionals[0]}"`);
      const db = openCommandDatabase(dbPath, { create: false });
      try {
        const served = runningServer(db) !== undefined;
        const status = createSync(commandContext(db), { dbPath, oneShot: true }).status();
        // What a running service recorded is only true while it runs.
        if (!served) status.connected = false;
        process.stdout.write(values.json ? `${JSON.stringify(status, null, 2)}\n` : statusText(status, served));
      } finally {
        db.close();
      }
      return;
    }
    case 'leave': {
      if (positionals.length > 0) fail(`unexpected argument "${positionals[0]}"`);
      await withSync(dbPath, false, async (s) => {
        const before = s.status();
        if (!before.enabled) throw new CommandFailed(`Sync is not set up on ${dbPath}; nothing to leave.`, EXIT.failed);
        await s.leave();
        process.stdout.write(`Left sync: ${dbPath} keeps its records and stops syncing. The other devices keep theirs.\n`);
      });
      return;
    }
    default:
      fail(`unknown sync command "${sub ?? ''}"; use sync init, sync join, sync status or sync leave`);
  }
}

/** Runs a set-up change on a database nobody serves (the running app would not see it otherwise). */
async function withSync(dbPath: string, create: boolean, fn: (s: SyncSubsystem, db: Db) => Promise<void>): Promise<void> {
  const db = openCommandDatabase(dbPath, { create });
  try {
    const server = runningServer(db);
    if (server && (await serverAnswers(server))) {
      throw new CommandFailed(
        `Chyme is running on ${dbPath} (${server.url}): use Integrations → Sync in the app (or the /v1/sync API), or stop it and run this again.`,
        EXIT.failed,
      );
    }
    ensureSettings(db, dbPath);
    const app = commandContext(db);
    const s = createSync(app, { dbPath, oneShot: true });
    try {
      await fn(s, db);
    } catch (err) {
      if (err instanceof UpstreamError || err instanceof ConflictError) throw new CommandFailed(err.message, EXIT.failed);
      if (err instanceof InvalidInputError) throw new CommandFailed(err.message, EXIT.usage);
      throw err;
    } finally {
      await s.stop();
    }
  } finally {
    db.close();
  }
}

function recordCounts(db: Db): string {
  const n = (sql: string) => (db.prepare(sql).pluck().get() as number).toLocaleString('en-US');
  return `${n('SELECT COUNT(*) FROM meals')} meals, ${n('SELECT COUNT(*) FROM sleep_sessions')} nights of sleep, ${n("SELECT COUNT(*) FROM foods WHERE source = 'custom'")} custom foods and ${n('SELECT COUNT(*) FROM saved_meals')} saved meals`;
}

function statusText(s: SyncStatus, served: boolean): string {
  if (!s.enabled) return 'Sync is off. Set it up with chyme sync init --relay URL --token T, or join with chyme sync join CODE.\n';
  const lines = [
    `device_id: ${s.device_id}`,
    `device_name: ${s.device_name}`,
    `relay: ${s.relay}`,
    `connected: ${s.connected}${served ? '' : ' (nothing is running on this database: chyme serve or the app syncs)'}`,
    `last_synced_at: ${s.last_synced_at ?? 'never'}`,
    `pending_changes: ${s.pending_changes}`,
    `webhook_host: ${s.webhook_host ? `${s.webhook_host.device_name} (${s.webhook_host.device_id})${s.is_webhook_host ? ', this device' : ''}` : 'none'}`,
    `peers: ${s.peers.map((p) => `${p.device_name} (${p.device_id})${p.this_device ? ' this device' : ''}`).join(', ') || 'none'}`,
  ];
  if (s.last_error) lines.push(`last_error: ${s.last_error}`);
  return `${lines.join('\n')}\n`;
}
