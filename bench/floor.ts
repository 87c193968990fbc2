/**
 * The floor: a bare node:http + better-sqlite3 server answering the same two meal queries as
 * Chyme's API, on the same file, with the same JSON. No framework, no authentication, no
 * validation: what any server must at least spend on these requests. Used by bench/http.ts;
 * run alone with `node --import tsx bench/floor.ts <db file>`.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Database from 'better-sqlite3';

interface Row {
  id: string;
  timestamp_ms: number;
  utc_offset_min: number;
  day: string;
  meal_type: string;
  description: string;
  calories: number;
  calories_source: string;
  protein_g: number | null;
  carbs_g: number | null;
  fat_g: number | null;
  fiber_g: number | null;
  sodium_mg: number | null;
  caffeine_mg: number | null;
  foods_json: string;
  nutrient_sources_json: string;
  source: string;
  inferred_time: number;
  created_ms: number;
  updated_ms: number;
}

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

const NUTRIENTS = ['protein_g', 'carbs_g', 'fat_g', 'fiber_g', 'sodium_mg', 'caffeine_mg'] as const;

function resource(r: Row) {
  // Food entries are stored as the resource shows them; a nutrient's source is stored when known,
  // else "logged" when the meal has a value (meals from before sources were recorded).
  const foods = JSON.parse(r.foods_json) as unknown[];
  const stored = JSON.parse(r.nutrient_sources_json) as Record<string, string>;
  const nutrientSources: Record<string, string | null> = {};
  for (const k of NUTRIENTS) nutrientSources[k] = stored[k] ?? (r[k] !== null ? 'logged' : null);
  return {
    object: 'nutrition.meal',
    id: r.id,
    day: r.day,
    timestamp: iso(r.timestamp_ms),
    meal_type: r.meal_type,
    description: r.description,
    macros: { calories: r.calories, protein_g: r.protein_g ?? 0, carbs_g: r.carbs_g ?? 0, fat_g: r.fat_g ?? 0, fiber_g: r.fiber_g },
    calories_source: r.calories_source,
    nutrient_sources: nutrientSources,
    micros: { sodium_mg: r.sodium_mg ?? 0, caffeine_mg: r.caffeine_mg },
    foods,
    utc_offset_min: r.utc_offset_min,
    inferred_time: r.inferred_time === 1,
    source: r.source,
    created_at: iso(r.created_ms),
    updated_at: iso(r.updated_ms),
  };
}

export interface RunningServer {
  url: string;
  stop(): Promise<void>;
}

export async function startFloor(dbPath: string, port = 0): Promise<RunningServer> {
  const db = new Database(dbPath, { readonly: true });
  const list = db.prepare('SELECT * FROM meals WHERE day >= ? AND day <= ? ORDER BY timestamp_ms DESC, id DESC LIMIT ?');
  const one = db.prepare('SELECT * FROM meals WHERE id = ?');

  const send = (res: import('node:http').ServerResponse, status: number, body: unknown) => {
    const payload = JSON.stringify(body);
    res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(payload) });
    res.end(payload);
  };

  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname === '/v1/nutrition/meals') {
      const limit = Number(url.searchParams.get('limit') ?? 50);
      const rows = list.all(url.searchParams.get('start_date'), url.searchParams.get('end_date'), limit + 1) as Row[];
      send(res, 200, { object: 'list', data: rows.slice(0, limit).map(resource), has_more: rows.length > limit });
      return;
    }
    const m = /^\/v1\/nutrition\/meals\/([^/]+)$/.exec(url.pathname);
    const row = m ? (one.get(decodeURIComponent(m[1]!)) as Row | undefined) : undefined;
    if (row) send(res, 200, resource(row));
    else send(res, 404, { error: { type: 'invalid_request_error', code: 'resource_missing', message: 'Not found' } });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const address = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${address.port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          db.close();
          resolve();
        });
      }),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const dbPath = process.argv[2];
  if (!dbPath) throw new Error('usage: node --import tsx bench/floor.ts <db file>');
  const floor = await startFloor(dbPath);
  console.log(`LISTENING ${floor.url}`);
  const stop = () => void floor.stop().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
