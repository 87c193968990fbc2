import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadavg } from 'node:os';
import { historyImportDocument } from '../../bench/seed.js';
import { dayOf } from '../../server/time/tz.js';
import { converged, startDevice, startSyncedPair, until, type Device, type SyncedPair } from '../helpers/sync.js';

/**
 * Issue 27, the defects found by trying sync from outside: two years imported on one device while
 * both devices log a meal every 2 s and a third device joins midway. Every change must end on the
 * relay and on every device; a meal logged on one device reaches the other while the import is
 * being written out; and no request hangs. The bounds here are bounds on hangs (a loaded two-core
 * machine runs three services, a relay and the test at once); the figures they record are what
 * `npm run bench` (bench/sync.ts) measures against the 5 s and 200 ms targets.
 */

const LOG_EVERY_MS = 2000;
/** A meal logged on one device must reach the other within this (a bound on hangs on a loaded machine; the target, 5 s, is the bench's). */
const ARRIVAL_BOUND_MS = 60_000;
/**
 * No request may take longer than this (a bound on hangs; the target is 200 ms). A write on the
 * importing device waits for the import's transaction under way (~25 ms of writing each; when the
 * worker wrote the whole file in one, 12.7 s once at load 17 on two cores).
 */
const REQUEST_BOUND_MS = 30_000;

interface Logged {
  id: string;
  on: Device;
  at: number;
  arrivedMs?: number;
}

describe('sync: a two-year import while both devices log meals and a third joins', () => {
  let pair: SyncedPair;
  let a: Device;
  let b: Device;
  let c: Device | undefined;
  const slowest = new Map<string, number>();
  /** What the slowest request of each device was, and when (ms after the test began). */
  const slowestWhat = new Map<string, string>();
  /** The same, of the requests sent after the import was posted (what the issue's 200 ms is about). */
  const slowestBeside = new Map<string, { ms: number; what: string }>();
  let importPostedMs: number | undefined;
  const began = Date.now();

  /** A request through the device's API, its duration recorded per device. */
  async function timed<T = any>(d: Device, method: string, path: string, body?: unknown): Promise<{ status: number; json: T }> {
    const t0 = performance.now();
    const sentMs = Date.now();
    const r = await d.api<T>(method, path, body);
    const ms = performance.now() - t0;
    const what = `${method} ${path.split('/').slice(0, 4).join('/')} at ${((Date.now() - began) / 1000).toFixed(1)} s`;
    if (ms > (slowest.get(d.name) ?? 0)) {
      slowest.set(d.name, ms);
      slowestWhat.set(d.name, what);
    }
    if (importPostedMs !== undefined && sentMs >= importPostedMs && ms > (slowestBeside.get(d.name)?.ms ?? 0)) slowestBeside.set(d.name, { ms, what });
    return r;
  }

  before(async () => {
    pair = await startSyncedPair();
    ({ a, b } = pair);
  });

  after(async () => {
    await c?.stop();
    await pair?.stop();
  });

  test('every change reaches every device, single meals arrive while the import goes out, no request hangs', async () => {
    const now = Date.now();
    const doc = historyImportDocument({ lastDay: dayOf(now - 2 * 86_400_000, 'UTC'), days: 730, timezone: 'UTC' });
    const importedMeals = (doc.meals as unknown[]).length;
    const logged: Logged[] = [];
    let n = 0;
    let logging = true;
    const logOn = async (d: Device) => {
      while (logging) {
        const r = await timed(d, 'POST', '/v1/nutrition/meals', { timestamp: new Date(Date.now() - 60_000).toISOString(), meal_type: 'snack', description: `${d.name} live ${++n}`, macros: { calories: 100 } });
        assert.equal(r.status, 201, JSON.stringify(r.json));
        logged.push({ id: r.json.id as string, on: d, at: Date.now() });
        await new Promise((res) => setTimeout(res, LOG_EVERY_MS));
      }
    };
    // Arrival of each live meal on the other device of the pair.
    let watching = true;
    const watch = async () => {
      while (watching) {
        for (const m of logged) {
          if (m.arrivedMs !== undefined) continue;
          const other = m.on === a ? b : a;
          if ((await timed(other, 'GET', `/v1/nutrition/meals/${m.id}`)).status === 200) m.arrivedMs = Date.now() - m.at;
          else assert.ok(Date.now() - m.at < ARRIVAL_BOUND_MS, `${m.on.name}'s meal ${m.id} has not reached the other device within ${ARRIVAL_BOUND_MS} ms`);
        }
        await new Promise((res) => setTimeout(res, 100));
      }
    };
    const loggers = [logOn(a), logOn(b)];
    const watcher = watch();

    await new Promise((res) => setTimeout(res, 3000));
    const form = new FormData();
    form.append('file', new Blob([JSON.stringify(doc)]), 'two-years.json');
    importPostedMs = Date.now();
    const imported = await fetch(`${a.url}/v1/imports`, { method: 'POST', headers: { authorization: `Bearer ${a.key}` }, body: form });
    assert.equal(imported.status, 201, await imported.text());
    const importedAt = Date.now();
    const loadAtImport = loadavg()[0]!;

    // A third computer joins while the import is being written out.
    c = await startDevice(pair.dir, 'attic');
    const code = (await a.api('GET', '/v1/sync/pairing-code')).json.pairing_code as string;
    const joined = await c.api('POST', '/v1/sync/join', { pairing_code: code, name: 'attic' });
    assert.equal(joined.status, 200, JSON.stringify(joined.json));

    await new Promise((res) => setTimeout(res, 10_000));
    logging = false;
    await Promise.all(loggers);
    await until('every live meal on the other device', () => logged.every((m) => m.arrivedMs !== undefined), ARRIVAL_BOUND_MS);
    watching = false;
    await watcher;

    const devices = [a, b, c];
    await until(
      'every device holds every change and nothing is pending',
      async () => {
        for (const d of devices) {
          const s = (await d.api('GET', '/v1/sync')).json;
          if (s.pending_changes !== 0) return false;
        }
        return true;
      },
      120_000,
    );
    const history = (await converged(devices, 120_000)) as { meals: unknown[]; sleep_sessions: unknown[] };
    assert.equal(history.meals.length, importedMeals + logged.length);
    assert.equal(history.sleep_sessions.length, 730);
    const arrivals = logged.map((m) => m.arrivedMs!).sort((x, y) => x - y);
    const worstFrom = (d: Device) => Math.max(...logged.filter((m) => m.on === d).map((m) => m.arrivedMs!));
    // The machine's load when the import was posted and now: on two shared cores it, more than this code, sets the waits.
    const figures = `load ${loadAtImport.toFixed(1)}..${loadavg()[0]!.toFixed(1)}; live meals ${logged.length}, arrival p50 ${arrivals[Math.floor(arrivals.length / 2)]} ms, max ${arrivals.at(-1)} ms (${a.name} → ${b.name} ${worstFrom(a)} ms, ${b.name} → ${a.name} ${worstFrom(b)} ms); longest request ${[...slowest].map(([d, ms]) => `${d} ${Math.round(ms)} ms (${slowestWhat.get(d)})`).join(', ')}; after the import was posted ${[...slowestBeside].map(([d, { ms, what }]) => `${d} ${Math.round(ms)} ms (${what})`).join(', ')}; import posted at ${((importedAt - began) / 1000).toFixed(1)} s`;
    process.stdout.write(`# ${figures}\n`);
    for (const [d, ms] of slowest) assert.ok(ms < REQUEST_BOUND_MS, `a request on ${d} took ${Math.round(ms)} ms (${figures})`);
  });
});
