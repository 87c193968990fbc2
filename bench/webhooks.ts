/**
 * Webhook fan-out against `chyme serve` in its own process: meals logged through the API, each
 * announced (meal.created) to 10 local receivers, in two shapes:
 *
 * - burst: N meals as fast as 10 concurrent requests can log them, on the thread that also sends
 *   their N × 10 deliveries: this measures the drain rate (deliveries/s) and how long a delivery
 *   waits behind the burst's earlier ones (the lag), which the per-subscription in-flight budget
 *   bounds (a slot frees once per turn of the event loop).
 * - sustained: meals offered at a fixed rate (open loop: each request leaves at its scheduled
 *   time, answered or not), e.g. 100/s to 10 receivers asks for 1,000 deliveries/s; after a
 *   second of warm-up (not counted), this measures the achieved rate and the lag a delivery sees
 *   when the dispatcher keeps up.
 *
 * Meals are logged from 1.5 s after the server starts listening, once its deferred start-up work
 * (loading the foods table) is done. Each shape runs with all 10 receivers answering and with the last one never answering (every
 * attempt to it runs into its 10 s timeout); the figures of receivers 1–9, which answer in both
 * runs, are reported apart so the two runs compare like for like. Lag is from each event (its row)
 * to its delivery's first attempt, from the server's own records; "POST → arrival" is the same
 * as the client sees it (the meal request leaving → the first attempt arriving at the receiver).
 *
 * Run alone: `node --import tsx bench/webhooks.ts [burst|sustained]` (needs build/server).
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { openDatabase } from '../server/db/connection.js';
import { benchKey, cpuMsOf, startServe } from './serve.js';
import { percentile } from './stats.js';

const RECEIVERS = 10;
/** Wait after the server starts listening before logging meals (its deferred start-up work). */
const SETTLE_MS = 1500;

export interface FanOutOptions {
  /** Meals counted in the figures. */
  events: number;
  /** The last receiver never answers. */
  hangOne: boolean;
  /** Sustained: meals offered per second (open loop). Absent: a burst, 10 requests at a time. */
  eventsPerSec?: number;
  /** Sustained: meals offered first at the same rate and left out of the figures (JIT, caches). */
  warmupEvents?: number;
}

export interface LagFigures {
  /** First attempts counted. */
  deliveries: number;
  /** First attempts per second, from the first counted event to the last first attempt. */
  deliveriesPerSec: number;
  /** From the event (its row, server clock) to its delivery's first attempt. */
  lagP50Ms: number;
  lagP99Ms: number;
  lagMaxMs: number;
  /** From the POST that logged the meal leaving the client to the first attempt arriving. */
  requestLagP50Ms: number;
  requestLagP99Ms: number;
}

export interface FanOutResult extends LagFigures {
  mode: 'burst' | 'sustained';
  events: number;
  receivers: number;
  hangOne: boolean;
  eventsPerSec: number | undefined;
  /** The answering receivers' figures are the top level; these are receivers 1–9 alone. */
  firstNine: LagFigures;
  /** The meal POSTs' response times (ms). */
  postP50Ms: number;
  postP99Ms: number;
  /**
   * CPU time the server process used per counted event (its meal write and its 10 deliveries),
   * from the first counted meal to the last arrival, ms: unlike the lag, barely moved by other
   * processes competing for the cores.
   */
  serverCpuMsPerEvent: number;
  /** 1-minute load average when the run ended. */
  loadAverage: number;
}

/** Event → first attempt for each delivery to `urls`, from the server's own records (ms). */
function recordedLags(dbPath: string, urls: readonly string[]): Array<{ url: string; mealId: string; createdMs: number; startedMs: number }> {
  const db = openDatabase(dbPath, { readonly: true });
  try {
    return db
      .prepare(
        `SELECT s.url AS url, json_extract(e.data_json, '$.object.id') AS mealId, e.created_ms AS createdMs, MIN(a.started_ms) AS startedMs
           FROM webhook_deliveries d
           JOIN events e ON e.id = d.event_id
           JOIN webhook_subscriptions s ON s.id = d.subscription_id
           JOIN webhook_attempts a ON a.delivery_id = d.id
          WHERE s.url IN (SELECT value FROM json_each(?))
          GROUP BY d.id`,
      )
      .all(JSON.stringify(urls)) as Array<{ url: string; mealId: string; createdMs: number; startedMs: number }>;
  } finally {
    db.close();
  }
}

interface Receiver {
  url: string;
  /** Arrival time (performance.now) per meal id. */
  arrivals: Map<string, number>;
  close(): Promise<void>;
}

async function startReceiver(hang: boolean): Promise<Receiver> {
  const arrivals = new Map<string, number>();
  const held = new Set<ServerResponse>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      const id = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data: { object: { id: string } } }).data.object.id;
      if (!arrivals.has(id)) arrivals.set(id, at);
      if (hang) held.add(res);
      else res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    arrivals,
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of held) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One run: meals logged through the API and their deliveries to 10 receivers. */
export async function fanOut(options: FanOutOptions): Promise<FanOutResult> {
  const { events, hangOne, eventsPerSec } = options;
  const warmup = eventsPerSec === undefined ? 0 : (options.warmupEvents ?? 0);
  const dir = mkdtempSync(join(tmpdir(), 'chyme-bench-hooks-'));
  const dbPath = join(dir, 'chyme.db');
  const secret = benchKey(dbPath);
  const headers = { authorization: `Bearer ${secret}`, 'content-type': 'application/json' };
  const receivers = await Promise.all(Array.from({ length: RECEIVERS }, (_, i) => startReceiver(hangOne && i === RECEIVERS - 1)));
  const serve = await startServe(dbPath);
  try {
    for (const r of receivers) {
      const res = await fetch(`${serve.url}/v1/webhooks`, { method: 'POST', headers, body: JSON.stringify({ url: r.url, events: ['meal.created'] }) });
      if (res.status !== 201) throw new Error(`subscription: HTTP ${res.status} ${await res.text()}`);
    }
    // The server does some deferred start-up work about a second after listening (the foods
    // table and its search index: ~0.1-0.2 s on the thread); a long-running server has done it.
    await sleep(SETTLE_MS);
    const answering = hangOne ? receivers.slice(0, RECEIVERS - 1) : receivers;
    const firstNine = receivers.slice(0, RECEIVERS - 1);
    const sentAt = new Map<string, number>();
    const counted = new Set<string>();
    const postMs: number[] = [];
    let cpuAtFirstCounted = NaN;
    const logMeal = async (i: number) => {
      if (i === warmup) cpuAtFirstCounted = cpuMsOf(serve.pid);
      const t = performance.now();
      const res = await fetch(`${serve.url}/v1/nutrition/meals`, {
        method: 'POST',
        headers,
        // Six hours apart, as real meals are: the stomach model runs on the last day of meals.
        body: JSON.stringify({ timestamp: new Date(Date.now() - i * 6 * 3600_000).toISOString(), meal_type: 'snack', macros: { calories: 200 } }),
      });
      if (res.status !== 201) throw new Error(`meal: HTTP ${res.status}`);
      const id = ((await res.json()) as { id: string }).id;
      if (i >= warmup) {
        sentAt.set(id, t);
        counted.add(id);
        postMs.push(performance.now() - t);
      }
    };
    const total = warmup + events;
    if (eventsPerSec === undefined) {
      // Ten requests at a time, as a busy client would log them.
      let next = 0;
      await Promise.all(
        Array.from({ length: 10 }, async () => {
          while (next < total) await logMeal(next++);
        }),
      );
    } else {
      // Open loop: request i leaves at t0 + i / rate whether or not earlier ones were answered.
      const t0 = performance.now();
      const pending: Array<Promise<void>> = [];
      for (let i = 0; i < total; i++) {
        const wait = t0 + (i * 1000) / eventsPerSec - performance.now();
        if (wait > 0) await sleep(wait);
        pending.push(logMeal(i));
      }
      await Promise.all(pending);
    }
    const deadline = performance.now() + 60_000;
    const arrived = (r: Receiver) => [...counted].every((id) => r.arrivals.has(id));
    while (!answering.every(arrived) && performance.now() < deadline) await sleep(5);
    const serverCpuMs = cpuMsOf(serve.pid) - cpuAtFirstCounted;
    await serve.stop();

    const recorded = recordedLags(dbPath, receivers.map((r) => r.url)).filter((l) => counted.has(l.mealId));
    const figures = (group: Receiver[]): LagFigures => {
      const urls = new Set(group.map((r) => r.url));
      const mine = recorded.filter((l) => urls.has(l.url));
      const lags = mine.map((l) => l.startedMs - l.createdMs);
      const spanMs = Math.max(...mine.map((l) => l.startedMs)) - Math.min(...mine.map((l) => l.createdMs));
      const requestLags = group.flatMap((r) => [...counted].filter((id) => r.arrivals.has(id)).map((id) => r.arrivals.get(id)! - sentAt.get(id)!));
      return {
        deliveries: mine.length,
        deliveriesPerSec: mine.length / (Math.max(1, spanMs) / 1000),
        lagP50Ms: percentile(lags, 50),
        lagP99Ms: percentile(lags, 99),
        lagMaxMs: Math.max(...lags),
        requestLagP50Ms: percentile(requestLags, 50),
        requestLagP99Ms: percentile(requestLags, 99),
      };
    };
    return {
      mode: eventsPerSec === undefined ? 'burst' : 'sustained',
      events,
      receivers: receivers.length,
      hangOne,
      eventsPerSec,
      ...figures(answering),
      firstNine: figures(firstNine),
      postP50Ms: percentile(postMs, 50),
      postP99Ms: percentile(postMs, 99),
      serverCpuMsPerEvent: serverCpuMs / events,
      loadAverage: loadavg()[0]!,
    };
  } finally {
    await serve.stop();
    await Promise.all(receivers.map((r) => r.close()));
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The four runs of `npm run bench` (tiny in smoke mode). */
export async function fanOutRuns(smoke: boolean): Promise<FanOutResult[]> {
  const burst = smoke ? 10 : 200;
  const rate = smoke ? 20 : 100;
  const sustained = { events: smoke ? 20 : 500, eventsPerSec: rate, warmupEvents: smoke ? 0 : rate };
  return [
    await fanOut({ events: burst, hangOne: false }),
    await fanOut({ events: burst, hangOne: true }),
    await fanOut({ ...sustained, hangOne: false }),
    await fanOut({ ...sustained, hangOne: true }),
  ];
}

/** The report's section: one row per run, and receivers 1–9 alone. */
export function fanOutReport(results: readonly FanOutResult[]): string[] {
  const f0 = (x: number) => x.toFixed(0);
  const f1 = (x: number) => x.toFixed(1);
  const lines = [
    '### Webhook fan-out (10 local receivers, meal.created)',
    '',
    'Meals are logged from 1.5 s after the server started (its deferred start-up work done). ' +
      'Burst: the meals are logged as fast as 10 requests at a time allow, on the thread that also sends their deliveries, so deliveries/s ' +
      'is the drain rate and the lag is the time a delivery waits behind the burst\'s earlier ones. Sustained: meals offered at a fixed rate ' +
      '(open loop) after a second of warm-up that is not counted; deliveries/s is what was achieved, the lag what a delivery waits ' +
      'when the dispatcher keeps up. Lag: event → first attempt, from the server\'s records; POST → arrival as the client sees it.',
    '',
    '| run | receivers counted | events | deliveries | deliveries/s | lag p50 ms | p99 ms | max ms | POST → arrival p50 ms | p99 ms | meal POST p50 / p99 ms | server CPU ms per event | load avg |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const r of results) {
    const name = `${r.mode === 'burst' ? 'burst' : `sustained, ${r.eventsPerSec} events/s`}, ${r.hangOne ? 'one never answers' : 'all answer'}`;
    const row = (who: string, g: LagFigures, whole: boolean) =>
      `| ${name} | ${who} | ${r.events} | ${g.deliveries} | ${f0(g.deliveriesPerSec)} | ${f1(g.lagP50Ms)} | ${f1(g.lagP99Ms)} | ${f1(g.lagMaxMs)} | ` +
      `${f1(g.requestLagP50Ms)} | ${f1(g.requestLagP99Ms)} | ${whole ? `${f1(r.postP50Ms)} / ${f1(r.postP99Ms)}` : ''} | ` +
      `${whole ? r.serverCpuMsPerEvent.toFixed(2) : ''} | ${r.loadAverage.toFixed(1)} |`;
    if (r.hangOne) lines.push(row('1–9 (10 hangs)', r, true));
    else lines.push(row('all 10', r, true), row('1–9', r.firstNine, false));
  }
  return lines;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const which = process.argv[2];
  const runs =
    which === 'burst'
      ? [await fanOut({ events: 200, hangOne: false }), await fanOut({ events: 200, hangOne: true })]
      : which === 'sustained'
        ? [await fanOut({ events: 500, eventsPerSec: 100, warmupEvents: 100, hangOne: false }), await fanOut({ events: 500, eventsPerSec: 100, warmupEvents: 100, hangOne: true })]
        : await fanOutRuns(process.env.BENCH_SMOKE === '1');
  console.log(fanOutReport(runs).join('\n'));
}
