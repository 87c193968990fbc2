import { FileClock, type Clock } from '../../clock.js';
import { createLogger } from '../../logger.js';
import { createService, DEFAULT_RATE_LIMIT } from '../../service.js';
import { isValidTimeZone } from '../../time/tz.js';
import { dbPathFrom, fail, parseFlags, type Command } from '../usage.js';

export const serveCommand: Command = {
  name: 'serve',
  usage: [
    'chyme serve [--port P] [--host H] [--db FILE] [--tz IANA] [--allowed-host NAME]... [--rate-limit RATE[/BURST]]',
    `    --rate-limit: requests per second each API key may make, and the burst it may save up (default ${DEFAULT_RATE_LIMIT.perSecond}/${DEFAULT_RATE_LIMIT.burst}; a burst not given is 10 seconds' worth)`,
  ],
  run: serve,
};

/** "RATE" or "RATE/BURST", both positive numbers. */
function parseRateLimit(raw: string): { perSecond: number; burst: number } {
  const m = /^(\d+(?:\.\d+)?)(?:\/(\d+))?$/.exec(raw.trim());
  const perSecond = m ? Number(m[1]) : NaN;
  const burst = m?.[2] !== undefined ? Number(m[2]) : Math.ceil(perSecond * 10);
  if (!(perSecond > 0) || !(burst >= 1)) fail(`--rate-limit must be RATE or RATE/BURST with positive numbers, e.g. 200/2000, not ${raw}`);
  return { perSecond, burst };
}

/** `chyme serve`: the headless API + UI, until SIGINT/SIGTERM. */
async function serve(argv: string[]): Promise<void> {
  const { values } = parseFlags(argv, {
    port: { type: 'string' },
    host: { type: 'string' },
    db: { type: 'string' },
    tz: { type: 'string' },
    'allowed-host': { type: 'string', multiple: true },
    quiet: { type: 'boolean' },
    'rate-limit': { type: 'string' },
  });
  const port = values.port === undefined ? 7650 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`--port must be an integer from 0 to 65535, not ${values.port}`);
  if (values.tz !== undefined && !isValidTimeZone(values.tz)) fail(`--tz must be an IANA time zone such as Europe/Berlin, not ${values.tz}`);
  const rateLimit = values['rate-limit'] === undefined ? undefined : parseRateLimit(values['rate-limit']);
  // End-to-end tests move time by rewriting this file (see server/clock.ts).
  const clockFile = process.env.CHYME_TEST_CLOCK_FILE;
  const clock: Clock | undefined = clockFile ? new FileClock(clockFile) : undefined;
  // How soon a lost relay connection is tried again (default 5 s; tests of partitions shorten it).
  const syncRetryMs = Number(process.env.CHYME_SYNC_RETRY_MS) || undefined;

  const service = await createService({
    dbPath: dbPathFrom(values),
    port,
    host: values.host ?? '127.0.0.1',
    ...(values.tz ? { timezone: values.tz } : {}),
    ...(clock ? { clock } : {}),
    ...(values['allowed-host'] ? { allowedHosts: values['allowed-host'] } : {}),
    ...(rateLimit ? { rateLimit } : {}),
    ...(syncRetryMs ? { sync: { retryMs: syncRetryMs } } : {}),
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
