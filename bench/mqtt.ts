/**
 * MQTT in `npm run bench` (issue 21), against a real Mosquitto and a real `chyme serve`:
 *
 * 1. The cost of MQTT on meal writes: rounds of MQTT_WRITES (default 1,000) POST /v1/nutrition/meals
 *    with MQTT off, then on, alternating (off, on, off, on), each write awaited; the ratio of the
 *    medians of the rounds' per-write p50 and of their totals (target: at most 1.2×).
 * 2. How soon a write reaches Home Assistant: from sending a meal to the calories topic showing it.
 * 3. A broker outage of MQTT_OUTAGE_S (default 60) seconds under a steady 20 requests/s: the API's
 *    p99 during the outage (target under 100 ms) and how long after the broker's return the states
 *    are published again (target 30 s: the reconnect backoff is capped there).
 *
 * Writes bench/results/mqtt.md.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { runCli, startServe } from '../test/helpers/cli.js';
import { startBroker, watch } from '../test/helpers/mosquitto.js';
import { percentile } from './stats.js';

const WRITES = Number(process.env.MQTT_WRITES ?? 1000);
const OUTAGE_S = Number(process.env.MQTT_OUTAGE_S ?? 60);
const LOAD_RATE = 20;

const dir = mkdtempSync(join(tmpdir(), 'chyme-bench-mqtt-'));
const dbPath = join(dir, 'chyme.db');
const broker = await startBroker();
const key = runCli(['keys', 'create', '--name', 'bench', '--scopes', 'all', '--db', dbPath]).stdout.trim().split('\n').at(-1)!;
const server = await startServe(['--db', dbPath, '--tz', 'UTC', '--rate-limit', '5000/50000']);

async function api(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(server.url + path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

async function setMqtt(enabled: boolean): Promise<void> {
  const r = await api('PATCH', '/v1/integrations/mqtt', { enabled, broker_url: broker.url, username: broker.user, password: broker.password });
  if (r.status !== 200) throw new Error(`PATCH mqtt: ${r.status} ${JSON.stringify(r.json)}`);
  const deadline = Date.now() + 30_000;
  while (enabled && (await api('GET', '/v1/integrations/mqtt')).json.status !== 'connected') {
    if (Date.now() > deadline) throw new Error('MQTT did not connect');
    await new Promise((r) => setTimeout(r, 50));
  }
}

let n = 0;
/**
 * A meal as a person logs them: each 5 hours before the last, so a round of writes lays down a
 * realistic history (three or four meals a day) going back from now.
 */
const meal = () => {
  n++;
  return { timestamp: new Date(Date.now() - n * 5 * 3600_000).toISOString(), meal_type: 'snack', description: `bench ${n}`, macros: { calories: 100 + (n % 50) } };
};
let t = 0;
/** A meal just now (a few seconds apart), so each changes today's calories. */
const mealNow = () => ({ timestamp: new Date(Date.now() - 60_000 + t++ * 1000).toISOString(), meal_type: 'snack', description: `now ${t}`, macros: { calories: 50 } });

async function round(): Promise<{ p50: number; totalMs: number }> {
  const times: number[] = [];
  const started = performance.now();
  for (let i = 0; i < WRITES; i++) {
    const t0 = performance.now();
    const r = await api('POST', '/v1/nutrition/meals', meal());
    if (r.status !== 201) throw new Error(`POST meal: ${r.status}`);
    times.push(performance.now() - t0);
  }
  return { p50: percentile(times, 50), totalMs: performance.now() - started };
}

// ---- 1. writes with MQTT off and on ---------------------------------------------------------
const rounds: Record<'off' | 'on', Array<{ p50: number; totalMs: number }>> = { off: [], on: [] };
for (const state of ['off', 'on', 'off', 'on'] as const) {
  await setMqtt(state === 'on');
  rounds[state].push(await round());
  console.log(`mqtt ${state}: ${WRITES} writes, p50 ${rounds[state].at(-1)!.p50.toFixed(2)} ms, ${(rounds[state].at(-1)!.totalMs / 1000).toFixed(1)} s`);
}
const median = (xs: number[]) => percentile(xs, 50);
const p50Ratio = median(rounds.on.map((r) => r.p50)) / median(rounds.off.map((r) => r.p50));
const totalRatio = median(rounds.on.map((r) => r.totalMs)) / median(rounds.off.map((r) => r.totalMs));

// ---- 2. write → topic -----------------------------------------------------------------------
await setMqtt(true);
const sub = await broker.client();
const seen = await watch(sub, 'chyme/calories_today');
const latencies: number[] = [];
for (let i = 0; i < 50; i++) {
  const before = seen.all.length;
  const t0 = performance.now();
  await api('POST', '/v1/nutrition/meals', mealNow());
  await seen.until(() => seen.all.length > before, 'the calories topic');
  latencies.push(performance.now() - t0);
}

// ---- 3. a broker outage under load ----------------------------------------------------------
const outageTimes: number[] = [];
let stopLoad = false;
const load = (async () => {
  while (!stopLoad) {
    const t0 = performance.now();
    await (outageTimes.length % 4 === 0 ? api('POST', '/v1/nutrition/meals', meal()) : api('GET', '/v1/digestion/state'));
    outageTimes.push(performance.now() - t0);
    await new Promise((r) => setTimeout(r, 1000 / LOAD_RATE));
  }
})();
await broker.stop();
await new Promise((r) => setTimeout(r, OUTAGE_S * 1000));
const beforeReturn = seen.all.length;
const back = performance.now();
await broker.start();
// The subscriber lost its connection with the broker: a new one sees the republished (retained) states.
const sub2 = await broker.client();
const seen2 = await watch(sub2, 'chyme/calories_today');
await seen2.until(() => seen2.latest.get('chyme/calories_today'), 'states after the broker returned', 60_000);
const backAfterS = (performance.now() - back) / 1000;
stopLoad = true;
await load;
void beforeReturn;
await server.stop();
await broker.close();
rmSync(dir, { recursive: true, force: true });

const lines = [
  `# MQTT (${new Date().toISOString().slice(0, 16)}Z)`,
  '',
  `Machine: ${cpus().length} CPUs, 1-minute load average ${loadavg()[0]!.toFixed(1)} at the end (other work may share it). A real Mosquitto and a real \`chyme serve\` on loopback.`,
  '',
  `| figure | value | target |`,
  `| --- | ---: | --- |`,
  `| ${WRITES} meal writes, p50 per write, MQTT on ÷ off (median of 2 rounds each) | ${p50Ratio.toFixed(2)}× (${rounds.on.map((r) => r.p50.toFixed(2)).join(', ')} vs ${rounds.off.map((r) => r.p50.toFixed(2)).join(', ')} ms) | ≤ 1.2× |`,
  `| the same, total time on ÷ off | ${totalRatio.toFixed(2)}× (${rounds.on.map((r) => (r.totalMs / 1000).toFixed(1)).join(', ')} vs ${rounds.off.map((r) => (r.totalMs / 1000).toFixed(1)).join(', ')} s) | ≤ 1.2× |`,
  `| meal write → calories topic, p50 / p99 of 50 | ${percentile(latencies, 50).toFixed(0)} / ${percentile(latencies, 99).toFixed(0)} ms | within 2 s |`,
  `| API during a ${OUTAGE_S} s broker outage at ${LOAD_RATE} req/s: p50 / p99 / max of ${outageTimes.length} | ${percentile(outageTimes, 50).toFixed(1)} / ${percentile(outageTimes, 99).toFixed(1)} / ${Math.max(...outageTimes).toFixed(1)} ms | p99 < 100 ms |`,
  `| states published again after the broker returned | ${backAfterS.toFixed(1)} s | ≤ 30 s |`,
];
const report = lines.join('\n');
console.log(report);
mkdirSync(join(import.meta.dirname, 'results'), { recursive: true });
writeFileSync(join(import.meta.dirname, 'results', 'mqtt.md'), `${report}\n`);
