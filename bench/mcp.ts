/**
 * The MCP server's cost against the REST API's, side by side in one run on one service: a
 * `get_digestive_state` tool call over Streamable HTTP (POST /mcp in an open session, JSON
 * answers) against `GET /v1/digestion/state`, both with the same key, autocannon with 10
 * connections. The budget (issue 20): the tool call costs at most 2× the REST call, in p50
 * latency and in the server's CPU per request. Writes bench/results/mcp.md. BENCH_SECONDS sets
 * the measured seconds per run (default 3); BENCH_SMOKE=1 runs it tiny.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApiKey } from '../server/auth/keys.js';
import { openDatabase } from '../server/db/connection.js';
import { initSettings } from '../server/settings.js';
import { runLoad, startServerProcess, type LoadResult } from './load.js';
import { seedHistory } from './seed.js';

const SMOKE = process.env.BENCH_SMOKE === '1';
const TIMEZONE = 'Europe/Berlin';
// 18:30 on the last day: dinner is being digested, so the state has active meals to model.
const NOW = Date.UTC(2026, 10, 22, 18, 30);
const LAST_DAY = '2026-11-22';
const BUDGET = 2;
const SECONDS = Number(process.env.BENCH_SECONDS ?? (SMOKE ? 1 : 3));
const WARMUP = SMOKE ? 1 : 2;
const PROTOCOL = '2025-06-18';
const root = join(import.meta.dirname, '..');

const dir = mkdtempSync(join(tmpdir(), 'chyme-bench-mcp-'));
const dbPath = join(dir, 'chyme.db');
const db = openDatabase(dbPath);
initSettings(db, NOW, TIMEZONE);
const seeded = seedHistory(db, { lastDay: LAST_DAY, days: SMOKE ? 30 : 365, timezone: TIMEZONE });
const secret = createApiKey(db, { name: 'bench', scopes: ['digestion:read'], nowMs: NOW }).secret;
db.close();

const chyme = await startServerProcess('bench/chyme-server.ts', [dbPath, String(NOW)], root);
let rest: LoadResult;
let mcp: LoadResult;
try {
  const auth = { authorization: `Bearer ${secret}` };
  const mcpHeaders = { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': PROTOCOL };
  // One session, opened as a client opens it; every measured call then runs in it.
  const opened = await fetch(`${chyme.url}/mcp`, {
    method: 'POST',
    headers: mcpHeaders,
    body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: 'bench', version: '1' } } }),
  });
  const session = opened.headers.get('mcp-session-id');
  if (opened.status !== 200 || !session) throw new Error(`initialize answered ${opened.status}: ${await opened.text()}`);
  const headers = { ...mcpHeaders, 'mcp-session-id': session };
  await fetch(`${chyme.url}/mcp`, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) });
  // Every call gets its own JSON-RPC id ([<id>]): ids of calls in flight together must differ.
  const call = JSON.stringify({ jsonrpc: '2.0', id: '[<id>]', method: 'tools/call', params: { name: 'get_digestive_state', arguments: {} } });
  const probe = await (await fetch(`${chyme.url}/mcp`, { method: 'POST', headers, body: call.replace('[<id>]', 'probe') })).json() as { result?: { structuredContent?: { object?: string } } };
  if (probe.result?.structuredContent?.object !== 'digestion.state') throw new Error(`the tool call did not answer a state: ${JSON.stringify(probe)}`);

  rest = await runLoad({ url: `${chyme.url}/v1/digestion/state`, headers: auth, durationSec: SECONDS, warmupSec: WARMUP, pid: chyme.pid });
  mcp = await runLoad({ url: `${chyme.url}/mcp`, headers, body: call, durationSec: SECONDS, warmupSec: WARMUP, pid: chyme.pid });
  if (rest.failures > 0 || mcp.failures > 0) throw new Error(`${rest.failures} failed REST requests, ${mcp.failures} failed MCP calls`);
} finally {
  await chyme.stop();
  rmSync(dir, { recursive: true, force: true });
}

// autocannon reports whole milliseconds; a p50 of 0 ms is taken as 1 ms so the ratio stays defined.
const p50Ratio = Math.max(mcp.p50, 1) / Math.max(rest.p50, 1);
const meanRatio = mcp.mean / rest.mean;
const cpuRatio = mcp.cpuPerRequestUs! / rest.cpuPerRequestUs!;
const over = p50Ratio > BUDGET || cpuRatio > BUDGET;
const row = (name: string, r: LoadResult) =>
  `| ${name} | ${r.p50} | ${r.mean.toFixed(2)} | ${r.p99} | ${r.rps.toFixed(0)} | ${r.cpuPerRequestUs!.toFixed(0)} |`;
const lines = [
  `MCP tool call vs REST — ${new Date().toISOString()} — Node ${process.version}`,
  `one service, one key (digestion:read), autocannon, 10 connections, ${SECONDS} s per run after ${WARMUP} s of warm-up; ${seeded.meals} meals of history`,
  '',
  '| request | p50 ms | mean ms | p99 ms | req/s | server CPU µs/req |',
  '| --- | ---: | ---: | ---: | ---: | ---: |',
  row('GET /v1/digestion/state', rest),
  row('MCP tools/call get_digestive_state (POST /mcp)', mcp),
  '',
  `Ratio MCP/REST: p50 ${p50Ratio.toFixed(2)}×, mean ${meanRatio.toFixed(2)}×, CPU per request ${cpuRatio.toFixed(2)}× (budget ${BUDGET}×).`,
  over ? 'OVER BUDGET: the tool call costs more than 2× the REST call.' : 'Within budget: the tool call costs at most 2× the REST call.',
];
const report = lines.join('\n');
console.log(report);
mkdirSync(join(import.meta.dirname, 'results'), { recursive: true });
writeFileSync(join(import.meta.dirname, 'results', SMOKE ? 'mcp-smoke.md' : 'mcp.md'), `${report}\n`);
