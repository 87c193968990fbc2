/**
 * Webhook fan-out: N meals logged through the API, each announced (meal.created) to 10 local
 * receivers, against `chyme serve` in its own process. Reports deliveries per second and the lag
 * from each event to its delivery's first attempt (p50, p99; from the server's own records, ms),
 * the lag as a client sees it (POST → arrival), and the same with one receiver that never answers
 * (every attempt runs into its 10 s timeout): the others' lag should not move. Run alone: `node --import tsx bench/webhooks.ts` (needs build/server).
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { openDatabase } from '../server/db/connection.js';
import { benchKey, startServe } from './serve.js';

export interface FanOutResult {
  events: number;
  receivers: number;
  deliveries: number;
  /** First attempts to the answering receivers per second, from the first event to the last attempt. */
  deliveriesPerSec: number;
  /** From the event (its row, server clock) to its delivery's first attempt, answering receivers. */
  lagP50Ms: number;
  lagP99Ms: number;
  /** From the POST that logged the meal to the first attempt arriving at the receiver. */
  requestLagP50Ms: number;
  requestLagP99Ms: number;
}

/** Event → first attempt for each delivery to `urls`, from the server's own records (ms). */
function recordedLags(dbPath: string, urls: readonly string[]): Array<{ createdMs: number; startedMs: number }> {
  const db = openDatabase(dbPath, { readonly: true });
  try {
    return db
      .prepare(
        `SELECT e.created_ms AS createdMs, MIN(a.started_ms) AS startedMs
           FROM webhook_deliveries d
           JOIN events e ON e.id = d.event_id
           JOIN webhook_subscriptions s ON s.id = d.subscription_id
           JOIN webhook_attempts a ON a.delivery_id = d.id
          WHERE s.url IN (SELECT value FROM json_each(?))
          GROUP BY d.id`,
      )
      .all(JSON.stringify(urls)) as Array<{ createdMs: number; startedMs: number }>;
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

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

/** One run: `events` meals, 10 receivers, the last one hanging when `hangOne`. */
export async function fanOut(events: number, hangOne: boolean): Promise<FanOutResult> {
  const dir = mkdtempSync(join(tmpdir(), 'chyme-bench-hooks-'));
  const dbPath = join(dir, 'chyme.db');
  const secret = benchKey(dbPath);
  const headers = { authorization: `Bearer ${secret}`, 'content-type': 'application/json' };
  const receivers = await Promise.all(Array.from({ length: 10 }, (_, i) => startReceiver(hangOne && i === 9)));
  const serve = await startServe(dbPath);
  try {
    for (const r of receivers) {
      const res = await fetch(`${serve.url}/v1/webhooks`, { method: 'POST', headers, body: JSON.stringify({ url: r.url, events: ['meal.created'] }) });
      if (res.status !== 201) throw new Error(`subscription: HTTP ${res.status} ${await res.text()}`);
    }
    const answering = receivers.filter((_, i) => !(hangOne && i === 9));
    const sentAt = new Map<string, number>();
    // Ten requests at a time, as a busy client would log them.
    let next = 0;
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        while (next < events) {
          const i = next++;
          const t = performance.now();
          const res = await fetch(`${serve.url}/v1/nutrition/meals`, {
            method: 'POST',
            headers,
            // Six hours apart, as real meals are: the stomach model runs on the last day of meals.
            body: JSON.stringify({ timestamp: new Date(Date.now() - i * 6 * 3600_000).toISOString(), meal_type: 'snack', macros: { calories: 200 } }),
          });
          if (res.status !== 201) throw new Error(`meal: HTTP ${res.status}`);
          sentAt.set(((await res.json()) as { id: string }).id, t);
        }
      }),
    );
    const deadline = performance.now() + 60_000;
    while (answering.some((r) => r.arrivals.size < events) && performance.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const requestLags = answering.flatMap((r) => [...r.arrivals].map(([id, at]) => at - sentAt.get(id)!));
    await serve.stop();
    const recorded = recordedLags(dbPath, answering.map((r) => r.url));
    const lags = recorded.map((l) => l.startedMs - l.createdMs);
    const spanMs = Math.max(...recorded.map((l) => l.startedMs)) - Math.min(...recorded.map((l) => l.createdMs));
    return {
      events,
      receivers: receivers.length,
      deliveries: recorded.length,
      deliveriesPerSec: recorded.length / (Math.max(1, spanMs) / 1000),
      lagP50Ms: percentile(lags, 50),
      lagP99Ms: percentile(lags, 99),
      requestLagP50Ms: percentile(requestLags, 50),
      requestLagP99Ms: percentile(requestLags, 99),
    };
  } finally {
    await serve.stop();
    await Promise.all(receivers.map((r) => r.close()));
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const events = Number(process.argv[2] ?? 200);
  for (const hang of [false, true]) {
    const r = await fanOut(events, hang);
    console.log(
      `${hang ? 'one receiver hanging' : 'all answering'}: ${r.deliveries} deliveries, ${r.deliveriesPerSec.toFixed(0)}/s, ` +
        `event → first attempt p50 ${r.lagP50Ms.toFixed(1)} ms, p99 ${r.lagP99Ms.toFixed(1)} ms; POST → arrival p50 ${r.requestLagP50Ms.toFixed(1)} ms, p99 ${r.requestLagP99Ms.toFixed(1)} ms`,
    );
  }
}
