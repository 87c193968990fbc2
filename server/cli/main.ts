#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { createApiKey } from '../auth/keys.js';
import { isScope, SCOPES, type Scope } from '../auth/scopes.js';
import { FileClock, type Clock } from '../clock.js';
import { DatabaseTooNewError, openDatabase } from '../db/connection.js';
import { getApiKey, listApiKeys, revokeApiKey } from '../db/api-keys.js';
import { createLogger } from '../logger.js';
import { defaultDbPath } from '../paths.js';
import { createService, DEFAULT_RATE_LIMIT } from '../service.js';
import { IMPORT_USAGE, importCommand, ImportUsageError } from './commands/import.js';
import { isValidTimeZone, isoUtc } from '../time/tz.js';

const USAGE = `Usage:
  chyme serve [--port P] [--host H] [--db FILE] [--tz IANA] [--allowed-host NAME]... [--rate-limit RATE[/BURST]]
  chyme keys create --name NAME --scopes a,b|all [--db FILE]
  chyme keys list [--json] [--db FILE]
  chyme keys revoke ID [--db FILE]
${IMPORT_USAGE}

--rate-limit: requests per second each API key may make, and the burst it may save up
  (default ${DEFAULT_RATE_LIMIT.perSecond}/${DEFAULT_RATE_LIMIT.burst}; a burst not given is 10 seconds' worth).
Scopes: ${SCOPES.join(', ')}
Default database: ${defaultDbPath()}`;

class UsageError extends Error {}

/** "RATE" or "RATE/BURST", both positive numbers. */
function parseRateLimit(raw: string): { perSecond: number; burst: number } {
  const m = /^(\d+(?:\.\d+)?)(?:\/(\d+))?$/.exec(raw.trim());
  const perSecond = m ? Number(m[1]) : NaN;
  const burst = m?.[2] !== undefined ? Number(m[2]) : Math.ceil(perSecond * 10);
  if (!(perSecond > 0) || !(burst >= 1)) fail(`--rate-limit must be RATE or RATE/BURST with positive numbers, e.g. 200/2000, not ${raw}`);
  return { perSecond, burst };
}

function fail(message: string): never {
  throw new UsageError(message);
}

async function serve(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      db: { type: 'string' },
      tz: { type: 'string' },
      'allowed-host': { type: 'string', multiple: true },
      quiet: { type: 'boolean' },
      'rate-limit': { type: 'string' },
    },
    strict: true,
  });
  const port = values.port === undefined ? 7650 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`--port must be an integer from 0 to 65535, not ${values.port}`);
  if (values.tz !== undefined && !isValidTimeZone(values.tz)) fail(`--tz must be an IANA time zone such as Europe/Berlin, not ${values.tz}`);
  const rateLimit = values['rate-limit'] === undefined ? undefined : parseRateLimit(values['rate-limit']);
  // End-to-end tests move time by rewriting this file (see server/clock.ts).
  const clockFile = process.env.CHYME_TEST_CLOCK_FILE;
  const clock: Clock | undefined = clockFile ? new FileClock(clockFile) : undefined;

  const service = await createService({
    dbPath: values.db ?? defaultDbPath(),
    port,
    host: values.host ?? '127.0.0.1',
    ...(values.tz ? { timezone: values.tz } : {}),
    ...(clock ? { clock } : {}),
    ...(values['allowed-host'] ? { allowedHosts: values['allowed-host'] } : {}),
    ...(rateLimit ? { rateLimit } : {}),
    logger: createLogger({ silent: values.quiet ?? false }),
  });
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`Received ${signal}; finishing in-flight requests and closing the database.\n`);
    service.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        process.stderr.write(`Shutdown failed: ${String(err)}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  // The ready lines come last: once a caller has seen them, a signal already stops us cleanly.
  process.stdout.write(`Chyme listening on ${service.url}\n`);
  process.stdout.write(`App: ${service.createLaunchUrl()}\n`);
}

function parseScopes(raw: string): Scope[] {
  if (raw.trim() === 'all') return [...SCOPES];
  const scopes = raw.split(',').map((s) => s.trim()).filter(Boolean);
  if (scopes.length === 0) fail('--scopes must name at least one scope');
  for (const s of scopes) if (!isScope(s)) fail(`unknown scope "${s}"; known scopes: ${SCOPES.join(', ')}, or "all"`);
  return scopes as Scope[];
}

function keys(argv: string[]): void {
  const [sub, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    options: { name: { type: 'string' }, scopes: { type: 'string' }, db: { type: 'string' }, json: { type: 'boolean' } },
    allowPositionals: true,
    strict: true,
  });
  const db = openDatabase(values.db ?? defaultDbPath());
  try {
    switch (sub) {
      case 'create': {
        const name = values.name?.trim();
        if (!name) fail('keys create needs --name NAME');
        if (name.length > 100) fail('--name must be at most 100 characters');
        if (values.scopes === undefined) fail('keys create needs --scopes a,b (or --scopes all)');
        const { key, secret } = createApiKey(db, { name, scopes: parseScopes(values.scopes), nowMs: Date.now() });
        process.stdout.write(`Created API key ${key.id} "${key.name}" with scopes ${key.scopes.join(', ')}.\n`);
        process.stdout.write('This secret is shown once; store it now:\n');
        process.stdout.write(`${secret}\n`);
        return;
      }
      case 'list': {
        const list = listApiKeys(db);
        if (values.json) {
          const out = list.map((k) => ({
            object: 'api_key',
            id: k.id,
            name: k.name,
            scopes: k.scopes,
            prefix: k.prefix,
            created_at: isoUtc(k.createdMs),
            last_used_at: k.lastUsedMs === null ? null : isoUtc(k.lastUsedMs),
          }));
          process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
          return;
        }
        if (list.length === 0) {
          process.stdout.write('No API keys. Create one with: chyme keys create --name NAME --scopes nutrition:read\n');
          return;
        }
        for (const k of list) {
          const used = k.lastUsedMs === null ? 'never used' : `last used ${isoUtc(k.lastUsedMs)}`;
          process.stdout.write(`${k.id}  ${k.prefix}…  ${k.name}  [${k.scopes.join(', ')}]  created ${isoUtc(k.createdMs)}, ${used}\n`);
        }
        return;
      }
      case 'revoke': {
        const id = positionals[0];
        if (!id) fail('keys revoke needs the key id, e.g. chyme keys revoke key_…');
        const key = getApiKey(db, id);
        if (!key || key.internal) fail(`no API key with id ${id}`);
        if (!revokeApiKey(db, id, Date.now())) fail(`API key ${id} was already revoked`);
        process.stdout.write(`Revoked API key ${id} "${key.name}".\n`);
        return;
      }
      default:
        fail(`unknown keys command "${sub ?? ''}"`);
    }
  } finally {
    db.close();
  }
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'serve':
      return serve(rest);
    case 'keys':
      return keys(rest);
    case 'import':
      return importCommand(rest);
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(`${USAGE}\n`);
      return;
    default:
      fail(`unknown command "${command}"`);
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof UsageError || err instanceof ImportUsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    process.stderr.write(`chyme: ${(err as Error).message}\n\n${USAGE}\n`);
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
