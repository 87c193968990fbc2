/**
 * A first join takes the history newest first (engine.ts, joinNewestFirst): the root, then the
 * current weeks, then older months newest first, with the service answering in between. A real
 * relay (in-process) behind a WebSocket proxy that this test controls, and two real services on
 * 127.0.0.1 (the desktop's API; the phone runs the same engine). The proxy records which documents
 * each pull of the join asks for and holds the first pull of older months until the test has
 * asked the joining device for Today: that is how "Today answers while older months are still
 * arriving" is observed without timing anything.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import { deriveKeys } from '../../server/sync/crypto.js';
import { ROOT_NAME, shardName } from '../../server/sync/documents.js';
import { decodePairingCode, encodePairingCode } from '../../server/sync/index.js';
import { decodeFrame, type ClientMessage } from '../../server/sync/protocol.js';
import { startRelay, type Relay } from '../../server/sync/relay.js';
import { startTestService, type TestService } from '../helpers/service.js';

/** Months with one meal each before the current one (TEST_NOW is 22 Nov 2026): Nov 2024 … Oct 2026. */
const MONTHS_BACK = 24;
const TODAY = '2026-11-22';

interface Proxy {
  url: string;
  /** The documents each pull that lists documents asked for, in order. */
  pulls: string[][];
  /** Resolves when the join asks for its first batch of older months (held until release()). */
  olderAsked: Promise<void>;
  release(): void;
  /** Connections open through the proxy now. */
  clients(): number;
  close(): Promise<void>;
}

/** Passes frames both ways; holds the third pull that lists documents (root, current weeks, then older). */
async function startProxy(target: string): Promise<Proxy> {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await once(server, 'listening');
  const pulls: string[][] = [];
  const held: Array<() => void> = [];
  let released = false;
  let askedOlder!: () => void;
  const olderAsked = new Promise<void>((r) => (askedOlder = r));
  server.on('connection', (client, req) => {
    const upstream = new WebSocket(target + (req.url ?? '/'));
    const queue: RawData[] = [];
    upstream.on('open', () => queue.splice(0).forEach((d) => upstream.send(d)));
    upstream.on('message', (d) => client.readyState === client.OPEN && client.send(d));
    upstream.on('close', () => client.close());
    client.on('close', () => upstream.close());
    client.on('message', (d: Buffer) => {
      const forward = () => (upstream.readyState === upstream.OPEN ? upstream.send(d) : queue.push(d));
      const { header } = decodeFrame<ClientMessage>(new Uint8Array(d));
      if (header.t === 'pull' && header.oids) {
        pulls.push(header.oids);
        if (pulls.length === 3 && !released) {
          held.push(forward);
          askedOlder();
          return;
        }
      }
      forward();
    });
  });
  const port = (server.address() as { port: number }).port;
  return {
    url: `ws://127.0.0.1:${port}`,
    pulls,
    olderAsked,
    release() {
      released = true;
      held.splice(0).forEach((f) => f());
    },
    clients: () => server.clients.size,
    async close() {
      for (const c of server.clients) c.terminate();
      await new Promise((r) => server.close(r));
    },
  };
}

const month = (back: number): string => {
  const d = new Date(Date.UTC(2026, 10 - back, 10, 12));
  return d.toISOString().slice(0, 7);
};

describe('a first join takes the newest weeks first', () => {
  let dir: string;
  let relay: Relay;
  let proxy: Proxy;
  let desk: TestService;
  let laptop: TestService;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'chyme-join-order-'));
    relay = await startRelay({ host: '127.0.0.1', port: 0, dataDir: join(dir, 'relay'), log: () => undefined });
    proxy = await startProxy(relay.url);
    desk = await startTestService({ sync: { retryMs: 200 } });
    laptop = await startTestService({ sync: { retryMs: 200 } });
  });

  after(async () => {
    proxy?.release();
    await laptop?.stop();
    await desk?.stop();
    await proxy?.close();
    await relay?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('the root, then this and last month, then older months newest first; Today answers while they arrive', async () => {
    for (const t of ['08:00', '12:30']) {
      const r = await desk.request('POST', '/v1/nutrition/meals', { body: { timestamp: `${TODAY}T${t}:00Z`, meal_type: 'snack', macros: { calories: 100 } } });
      assert.equal(r.status, 201, r.text);
    }
    for (let back = 1; back <= MONTHS_BACK; back++) {
      const r = await desk.request('POST', '/v1/nutrition/meals', { body: { timestamp: `${month(back)}-10T12:00:00Z`, meal_type: 'lunch', macros: { calories: 500 } } });
      assert.equal(r.status, 201, r.text);
    }
    const total = 2 + MONTHS_BACK;
    const setup = await desk.request('POST', '/v1/sync/setup', { body: { relay: relay.url, token: relay.token, name: 'Desk' } });
    assert.equal(setup.status, 201, setup.text);
    const deskId: string = setup.body.device_id;
    for (const deadline = Date.now() + 60_000; (await desk.request('GET', '/v1/sync')).body.pending_changes !== 0; ) {
      assert.ok(Date.now() < deadline, 'the desk sent its history within 60 s (a bound on hangs)');
      await new Promise((r) => setTimeout(r, 50));
    }
    const code = decodePairingCode((await desk.request('GET', '/v1/sync/pairing-code')).body.pairing_code);
    const keys = await deriveKeys(code.secret);

    const joined = laptop.request('POST', '/v1/sync/join', { body: { pairing_code: encodePairingCode({ ...code, relay: proxy.url }), name: 'Laptop' } });
    await Promise.race([proxy.olderAsked, joined.then((r) => assert.fail(`the join ended before asking for older months: ${r.text}`))]);

    // The device asks for the next batch before it applies the one it has (one ahead): the
    // current weeks are in once its progress says so. Older months are held at the proxy.
    for (const deadline = Date.now() + 60_000; laptop.service.sync.joinProgress()?.phase !== 'older'; ) {
      assert.ok(Date.now() < deadline, 'the current weeks were applied within 60 s (a bound on hangs)');
      await new Promise((r) => setTimeout(r, 20));
    }
    // Today already answers, with today's meals.
    const today = await laptop.request('GET', `/v1/nutrition/meals?start_date=${TODAY}&end_date=${TODAY}`);
    assert.equal(today.status, 200, today.text);
    assert.equal(today.body.data.length, 2, 'today’s two meals are on the joining device');
    const lastMonth = await laptop.request('GET', `/v1/nutrition/meals?start_date=${month(1)}-01&end_date=${month(1)}-28`);
    assert.equal(lastMonth.body.data.length, 1, 'last month is among the current weeks');
    const older = await laptop.request('GET', `/v1/nutrition/meals?start_date=2024-01-01&end_date=${month(2)}-28`);
    assert.equal(older.body.data.length, 0, 'no older month has arrived yet');
    assert.equal(laptop.service.sync.joinProgress()?.phase, 'older');
    // The service's background start, come late (a busy machine starts it at most 2 s after
    // listening, even with a join's request open), finds the join under way and leaves sync to it:
    // it once started a second engine from the join's half-written state, which pulled the whole
    // history again beside the join and drained the same changes twice.
    laptop.service.sync.start();
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(proxy.clients(), 1, 'one connection to the relay while the join is under way');

    proxy.release();
    const done = await joined;
    assert.equal(done.status, 200, done.text);
    assert.equal(proxy.clients(), 1, 'the engine the join made is the one sync runs');
    const all = await laptop.request('GET', '/v1/nutrition/meals?start_date=2024-01-01&end_date=2026-12-31&limit=100');
    assert.equal(all.body.data.length, total);

    // What each pull asked for: the root alone, then the current weeks, then the older months in order.
    const oid = (name: string) => keys.oid(name);
    assert.deepEqual(proxy.pulls[0], [await oid(ROOT_NAME)]);
    const current = [await oid(shardName(`meals/${month(0)}`, deskId)), await oid(shardName(`meals/${month(1)}`, deskId))];
    assert.deepEqual([...proxy.pulls[1]!].sort(), current.sort());
    const olderOrder = proxy.pulls.slice(2).flat();
    const expected = [];
    for (let back = 2; back <= MONTHS_BACK; back++) expected.push(await oid(shardName(`meals/${month(back)}`, deskId)));
    assert.deepEqual(olderOrder, expected, 'older months are asked for newest first');
  });
});
