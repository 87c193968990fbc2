/**
 * Chyme's service on a given database file, for the HTTP benchmarks: the real createService with
 * a fixed clock, no renderer and a rate limit too high to trip. Prints `LISTENING <url>`.
 * Usage: node --import tsx bench/chyme-server.ts <db file> <now ms>
 */
import { ManualClock } from '../server/clock.js';
import { silentLogger } from '../server/logger.js';
import { createService } from '../server/service.js';

const [dbPath, now] = process.argv.slice(2);
if (!dbPath || !now) throw new Error('usage: node --import tsx bench/chyme-server.ts <db file> <now ms>');
const service = await createService({
  dbPath,
  port: 0,
  clock: new ManualClock(Number(now)),
  logger: silentLogger,
  staticDir: null,
  rateLimit: { perSecond: 1e9, burst: 1e9 },
});
console.log(`LISTENING ${service.url}`);
const stop = () => void service.stop().then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
