/**
 * `npm run bench` (foods part): what the food table costs and how fast search is, on the whole table.
 *
 * - cold start: loading the shipped table into a new database (once per table version), the
 *   version check every later start does, and building the in-memory search index;
 * - search: each query of a typing session ("b", "ba", "ban", … "banana", multi-word, typos),
 *   in-process (the search function) and over HTTP (GET /v1/foods), median and 95th percentile.
 *
 * `--baseline <dir>`: also runs the in-process part on the search of another checkout (an earlier
 * commit: `git worktree add /tmp/base <commit>`, or `git archive <commit> | tar -x -C /tmp/base`
 * with node_modules linked), on its own database in the same process, alternating the two query by
 * query so that the machine's load falls on both alike, and prints the ratios.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import { SCOPES } from '../server/auth/scopes.js';
import { createApiKey } from '../server/auth/keys.js';
import { ManualClock } from '../server/clock.js';
import { openDatabase } from '../server/db/connection.js';
import { invalidateFoodSearch, prepareFoodSearch, searchFoods } from '../server/foods/search.js';
import { ensureFoodTable, loadedTableState } from '../server/foods/table.js';
import { FOOD_TABLE_FILE } from '../server/foods/table-file.js';
import { silentLogger } from '../server/logger.js';
import { createService } from '../server/service.js';
import { percentile } from './stats.js';

type SearchModule = Pick<typeof import('../server/foods/search.js'), 'searchFoods' | 'prepareFoodSearch' | 'invalidateFoodSearch'>;
interface Side {
  search: SearchModule;
  db: ReturnType<typeof openDatabase>;
}

const NOW = Date.UTC(2026, 10, 22, 12);
const WORDS = ['banana', 'chicken breast', 'oatmeal', 'greek yogurt', 'whole milk', 'brown rice cooked', 'cheddar cheese', 'apple raw'];
const TYPOS = ['bananna', 'chiken brest', 'yoghurt', 'brocoli', 'spagetti'];
/** Every prefix a person types on the way to each query, plus whole typos. */
const QUERIES = [...WORDS.flatMap((w) => Array.from({ length: w.length }, (_, i) => w.slice(0, i + 1)).filter((q) => q.trim() === q)), ...TYPOS];

const ms = (x: number) => `${x.toFixed(2)} ms`;
const baselineAt = process.argv.indexOf('--baseline');
const BUILDS = 11;
const baselineDir = baselineAt > 0 ? process.argv[baselineAt + 1] : undefined;

/** The other checkout's search, on a database of its own loaded by its own table code. */
async function openBaseline(dir: string, dbPath: string): Promise<Side> {
  const load = (path: string) => import(pathToFileURL(join(dir, path)).href);
  const connection = (await load('server/db/connection.ts')) as { openDatabase: typeof openDatabase };
  const table = (await load('server/foods/table.ts')) as { ensureFoodTable: typeof ensureFoodTable };
  const search = (await load('server/foods/search.ts')) as SearchModule;
  const db = connection.openDatabase(dbPath);
  table.ensureFoodTable(db, NOW);
  return { search, db };
}

/** Median time of building the in-memory index, rebuilt `times` times. */
function indexBuilds(side: Side, times: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < times; i++) {
    side.search.invalidateFoodSearch(side.db);
    const t = performance.now();
    side.search.prepareFoodSearch(side.db);
    out.push(performance.now() - t);
  }
  return out;
}

const dir = mkdtempSync(join(tmpdir(), 'chyme-bench-foods-'));
try {
  const dbPath = join(dir, 'chyme.db');
  const db = openDatabase(dbPath);
  let t = performance.now();
  ensureFoodTable(db, NOW);
  const loadMs = performance.now() - t;
  t = performance.now();
  ensureFoodTable(db, NOW);
  const checkMs = performance.now() - t;
  t = performance.now();
  prepareFoodSearch(db);
  const indexMs = performance.now() - t;

  const baseline = baselineDir ? await openBaseline(baselineDir, join(dir, 'baseline.db')) : undefined;
  for (const q of QUERIES) {
    searchFoods(db, q, 10, NOW); // warm-up
    baseline?.search.searchFoods(baseline.db, q, 10, NOW);
  }
  const inProcess: number[] = [];
  const typos: number[] = [];
  const baseInProcess: number[] = [];
  const baseTypos: number[] = [];
  for (let run = 0; run < 5; run++) {
    for (const q of QUERIES) {
      // With a baseline, the two take turns going first.
      if (baseline && run % 2 === 1) {
        t = performance.now();
        baseline.search.searchFoods(baseline.db, q, 10, NOW);
        (TYPOS.includes(q) ? baseTypos : baseInProcess).push(performance.now() - t);
      }
      t = performance.now();
      searchFoods(db, q, 10, NOW);
      (TYPOS.includes(q) ? typos : inProcess).push(performance.now() - t);
      if (baseline && run % 2 === 0) {
        t = performance.now();
        baseline.search.searchFoods(baseline.db, q, 10, NOW);
        (TYPOS.includes(q) ? baseTypos : baseInProcess).push(performance.now() - t);
      }
    }
  }
  const builds: Array<[number, number]> = [];
  const mine: Side = { search: { searchFoods, prepareFoodSearch, invalidateFoodSearch }, db };
  for (let i = 0; baseline && i < BUILDS; i++) {
    // Taking turns going first here too (the one that goes second meets the first one's garbage).
    const base = i % 2 ? indexBuilds(baseline, 1)[0]! : NaN;
    const now = indexBuilds(mine, 1)[0]!;
    builds.push([now, i % 2 ? base : indexBuilds(baseline, 1)[0]!]);
  }
  baseline?.db.close();
  const foodCount = loadedTableState(db)!.count;
  const secret = createApiKey(db, { name: 'bench', scopes: [...SCOPES], nowMs: NOW }).secret;
  db.close();

  const service = await createService({ dbPath, port: 0, clock: new ManualClock(NOW), logger: silentLogger, staticDir: null, rateLimit: { perSecond: 1e6, burst: 1e6 } });
  const http: number[] = [];
  try {
    for (let run = 0; run < 3; run++) {
      for (const q of QUERIES) {
        t = performance.now();
        const res = await fetch(`${service.url}/v1/foods?query=${encodeURIComponent(q)}&limit=10`, { headers: { authorization: `Bearer ${secret}` } });
        await res.arrayBuffer();
        if (run > 0) http.push(performance.now() - t);
      }
    }
  } finally {
    await service.stop();
  }

  console.log(`\nFood table and search (whole table, ${foodCount} foods)`);
  console.log(`  shipped table file: ${(statSync(FOOD_TABLE_FILE).size / 1024).toFixed(0)} KiB gzip; database grows by ${(statSync(dbPath).size / 1024 / 1024).toFixed(1)} MiB`);
  console.log(`  first start, table load (one transaction): ${ms(loadMs)}; later starts, version check: ${ms(checkMs)}; search index build: ${ms(indexMs)}`);
  console.log(`  search in-process, ${QUERIES.length - TYPOS.length} typing prefixes ×5: p50 ${ms(percentile(inProcess, 50))}, p95 ${ms(percentile(inProcess, 95))}`);
  console.log(`  search in-process, typos (${TYPOS.join(', ')}) ×5: p50 ${ms(percentile(typos, 50))}, p95 ${ms(percentile(typos, 95))}`);
  console.log(`  GET /v1/foods over HTTP: p50 ${ms(percentile(http, 50))}, p95 ${ms(percentile(http, 95))}`);
  if (baseline) {
    const ratio = (now: number[], base: number[], p: number) => `${ms(percentile(base, p))} → ${ms(percentile(now, p))} (${(percentile(now, p) / percentile(base, p)).toFixed(2)}×)`;
    console.log(`\nAgainst the baseline ${baselineDir}, same process, alternating (baseline → this):`);
    console.log(`  search in-process, typing prefixes: p50 ${ratio(inProcess, baseInProcess, 50)}, p95 ${ratio(inProcess, baseInProcess, 95)}`);
    console.log(`  search in-process, typos: p50 ${ratio(typos, baseTypos, 50)}, p95 ${ratio(typos, baseTypos, 95)}`);
    console.log(`  search index build (${BUILDS} each): median ${ratio(builds.map((b) => b[0]), builds.map((b) => b[1]), 50)}`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
