/**
 * How long `POST /v1/import` of a long history holds the server's thread: the digestion state is
 * asked for in a loop (one request at a time) while the import runs, and its latencies reported.
 * Part of `bench/run.ts` (the seeding of each history); alone: `node --import tsx
 * bench/seed-hold.ts [days]` (needs build/server; BENCH_CHYME_CLI runs another build).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { openDatabase } from '../server/db/connection.js';
import { initSettings } from '../server/settings.js';
import { historyImportDocument } from './seed.js';
import { benchKey, startServe } from './serve.js';
import { percentile } from './stats.js';

export interface SeedFigures {
  seedMs: number;
  /** State requests answered while the import ran, and their latencies (ms). */
  stateCount: number;
  stateP50Ms: number;
  stateP99Ms: number;
  stateMaxMs: number;
}

const SETTLE_MS = 1500;

/** Seeds `dbPath` (settings initialised, empty) with `doc` through POST /v1/import, measuring the state meanwhile. */
export async function seedThroughImport(dbPath: string, secret: string, doc: unknown): Promise<SeedFigures> {
  const serve = await startServe(dbPath);
  const auth = { authorization: `Bearer ${secret}` };
  try {
    // Warm: the first state request pays for loading the time zone data; and the server's
    // deferred start-up work (loading the food table, ~0.1 s of its thread a second after start)
    // is left to finish first, as a long-running server has.
    await (await fetch(`${serve.url}/v1/digestion/state`, { headers: auth })).text();
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const body = JSON.stringify(doc);
    const t0 = performance.now();
    let done = false;
    const importing = fetch(`${serve.url}/v1/import`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body }).then(async (res) => {
      const text = await res.text();
      done = true;
      if (res.status !== 200) throw new Error(`seeding through POST /v1/import failed: HTTP ${res.status} ${text}`);
      return performance.now() - t0;
    });
    const latencies: number[] = [];
    while (!done) {
      const s = performance.now();
      const res = await fetch(`${serve.url}/v1/digestion/state`, { headers: auth });
      await res.text();
      if (res.status !== 200) throw new Error(`state answered ${res.status} during the import`);
      // A request that was waiting when the import ended counts too: it may have waited for it.
      latencies.push(performance.now() - s);
    }
    const seedMs = await importing;
    return { seedMs, stateCount: latencies.length, stateP50Ms: percentile(latencies, 50), stateP99Ms: percentile(latencies, 99), stateMaxMs: Math.max(...latencies) };
  } finally {
    await serve.stop();
  }
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop()!)) {
  const days = Number(process.argv[2] ?? 3650);
  const dir = mkdtempSync(join(tmpdir(), 'chyme-seed-'));
  try {
    const dbPath = join(dir, 'chyme.db');
    const db = openDatabase(dbPath);
    initSettings(db, Date.now(), 'Europe/Berlin');
    db.close();
    const today = new Date().toISOString().slice(0, 10);
    const f = await seedThroughImport(dbPath, benchKey(dbPath), historyImportDocument({ lastDay: today, days, timezone: 'Europe/Berlin' }));
    console.log(`${days} days: import ${f.seedMs.toFixed(0)} ms; state during it: ${f.stateCount} answered, p50 ${f.stateP50Ms.toFixed(1)} / p99 ${f.stateP99Ms.toFixed(1)} / max ${f.stateMaxMs.toFixed(1)} ms`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
