import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { converged, pair, startDevice, startRelay, until, type Device, type RelayProcess } from '../helpers/sync.js';
import { startReceiver, type Receiver } from '../webhooks/helpers.js';

/**
 * Issue 22 / SYNC.md §6 and §8 case 6, "one sender": a relay process, `chyme serve` processes and a
 * real loopback receiver. Every change of the history must reach the receiver exactly once, through
 * the webhook host only, however late (relay down, host off), and a change announced by two devices
 * (a handover during a partition) must carry the same event id on both.
 *
 * Each subscription's URL names its device (`?from=A`), so the receiver knows who sent what: the
 * devices share one User-Agent. Every change is given a description (or brand) of its own, so an
 * expected change is (event type, object id, marker) and each delivery maps to exactly one of them.
 *
 * The host announces the changes it observes, which are states, not a log: a meal created and then
 * edited (or deleted) while the host could not see it may reach the host as one change (one
 * meal.created with the edited state, or nothing at all). So while the host is away each record is
 * changed at most once; every such change must then arrive exactly once.
 */

const HOUR = 3600_000;
const EVENTS = ['meal.created', 'meal.updated', 'meal.deleted', 'food.created', 'food.updated', 'food.deleted'];
const iso = (ms: number) => new Date(ms).toISOString();

interface Delivery {
  eventId: string;
  type: string;
  key: string;
  from: string;
}

describe('sync: exactly one device sends the webhooks', () => {
  let dir: string;
  let relay: RelayProcess;
  let a: Device;
  let b: Device;
  let c: Device | undefined;
  let receiver: Receiver;
  let code: string;
  let subA: string;
  let subB: string | undefined;
  const now = Date.now();
  let seq = 0;
  /** Every change made so far (type|id|marker), and which sender must deliver it. */
  const expected = new Map<string, { sender: 'A' | 'B' | 'either' }>();
  /** Changes made while two devices could both believe they are the host: the only ones that may arrive twice. */
  const window = new Set<string>();
  /** Meals of B's that the host has announced already, for the late phases to edit and delete. */
  const announced: Array<Record<string, unknown>> = [];

  const deliveries = (): Delivery[] =>
    receiver.received.map((r) => {
      const o = r.json?.data?.object ?? {};
      return { eventId: r.json?.id, type: r.json?.type, key: `${r.json?.type}|${o.id}|${marker(o)}`, from: new URL(r.path, 'http://x').searchParams.get('from') ?? '?' };
    });
  const marker = (o: Record<string, unknown>) => String(o.description ?? `${String(o.name)}/${String(o.brand)}`);
  const expect = (type: string, o: Record<string, unknown>, sender: 'A' | 'B' | 'either', inWindow = false) => {
    const key = `${type}|${String(o.id)}|${marker(o)}`;
    expected.set(key, { sender });
    if (inWindow) window.add(key);
  };

  async function logMeal(d: Device, sender: 'A' | 'B' | 'either', inWindow = false): Promise<Record<string, unknown>> {
    const n = ++seq;
    const r = await d.api('POST', '/v1/nutrition/meals', { timestamp: iso(now - n * HOUR), meal_type: 'snack', description: `${d.name} meal ${n}`, macros: { calories: 100 + n } });
    assert.equal(r.status, 201, JSON.stringify(r.json));
    expect('meal.created', r.json, sender, inWindow);
    return r.json;
  }
  async function editMeal(d: Device, id: string, sender: 'A' | 'B' | 'either', inWindow = false): Promise<Record<string, unknown>> {
    const r = await d.api('PATCH', `/v1/nutrition/meals/${id}`, { description: `${d.name} edit ${++seq}` });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    expect('meal.updated', r.json, sender, inWindow);
    return r.json;
  }
  async function deleteMeal(d: Device, meal: Record<string, unknown>, sender: 'A' | 'B' | 'either', inWindow = false): Promise<void> {
    assert.equal((await d.api('DELETE', `/v1/nutrition/meals/${String(meal.id)}`)).status, 200);
    expect('meal.deleted', meal, sender, inWindow);
  }

  /** Waits until every expected change has been delivered, and the senders have nothing left pending. */
  async function allDelivered(what: string, senders: Array<[Device, string]>): Promise<void> {
    await until(
      what,
      () => {
        const got = new Set(deliveries().map((d) => d.key));
        return [...expected.keys()].every((k) => got.has(k));
      },
      60_000,
    ).catch((err: Error) => {
      const got = new Set(deliveries().map((d) => d.key));
      const unexpected = deliveries().filter((d) => !expected.has(d.key)).map((d) => `${d.key} from ${d.from}`);
      throw new Error(`${err.message}; missing: ${[...expected.keys()].filter((k) => !got.has(k)).join(', ')}; delivered but not expected: ${unexpected.join(', ') || 'none'}`);
    });
    for (const [d, sub] of senders) {
      await until(`${d.name} has no pending delivery`, async () => {
        const r = await d.api('GET', `/v1/webhooks/${sub}/deliveries?status=pending`);
        return r.status === 200 && r.json.data.length === 0;
      });
    }
  }

  /** What must hold at every point: one id per change, each delivered once (twice at most for a handover overlap), by the right device. */
  function assertExactlyOnce(): void {
    const all = deliveries();
    const idsByKey = new Map<string, Set<string>>();
    const countById = new Map<string, Delivery[]>();
    for (const d of all) {
      assert.ok(expected.has(d.key), `a delivery nobody caused: ${d.key} (${d.eventId} from ${d.from})`);
      if (!idsByKey.has(d.key)) idsByKey.set(d.key, new Set());
      idsByKey.get(d.key)!.add(d.eventId);
      countById.set(d.eventId, [...(countById.get(d.eventId) ?? []), d]);
    }
    for (const [key, ids] of idsByKey) assert.equal(ids.size, 1, `one change, several event ids: ${key} → ${[...ids].join(', ')}`);
    for (const [id, list] of countById) {
      const key = list[0]!.key;
      const want = expected.get(key)!.sender;
      if (window.has(key)) {
        // Both devices believed they were the host: each may send it once, never one device twice.
        assert.ok(list.length <= 2, `${key} (${id}) arrived ${list.length} times`);
        assert.equal(new Set(list.map((d) => d.from)).size, list.length, `${key} (${id}) sent twice by the same device`);
      } else {
        assert.equal(list.length, 1, `${key} (${id}) arrived ${list.length} times: ${list.map((d) => d.from).join(', ')}`);
        if (want !== 'either') assert.equal(list[0]!.from, want, `${key} was sent by ${list[0]!.from}, not by the host ${want}`);
      }
    }
  }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'chyme-sync-webhooks-'));
    relay = await startRelay(join(dir, 'relay'));
    receiver = await startReceiver();
    [a, b] = await Promise.all([startDevice(dir, 'desk'), startDevice(dir, 'laptop')]);
    code = await pair(relay, a, b);
    await until('both connected', async () => (await a.api('GET', '/v1/sync')).json.connected && (await b.api('GET', '/v1/sync')).json.connected);
    const sub = await a.api('POST', '/v1/webhooks', { url: `${receiver.url}?from=A`, events: EVENTS });
    assert.equal(sub.status, 201, JSON.stringify(sub.json));
    subA = sub.json.id;
  });

  after(async () => {
    await Promise.all([a?.stop(), b?.stop(), c?.stop()]);
    await relay?.kill();
    await receiver?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('a device that is not the host cannot subscribe, and says which device sends', async () => {
    const r = await b.api('POST', '/v1/webhooks', { url: `${receiver.url}?from=B`, events: EVENTS });
    assert.equal(r.status, 409);
    assert.equal(r.json.error.code, 'webhook_host_elsewhere');
    assert.match(r.json.error.message, /^Webhooks of this history are sent by desk\. Add the webhook there, or make this device the webhook host first/);
    assert.equal((await b.api('GET', '/v1/webhooks')).json.data.length, 0);
  });

  test('meals and foods changed on B arrive exactly once, sent by A', async () => {
    const m1 = await logMeal(b, 'A');
    const m2 = await logMeal(b, 'A');
    const m3 = await logMeal(b, 'A');
    await until('B\'s meals on A', async () => (await a.api('GET', `/v1/nutrition/meals/${String(m3.id)}`)).status === 200);
    await editMeal(b, String(m1.id), 'A');
    const m2edited = await editMeal(b, String(m2.id), 'A');
    await until('the edit on A', async () => (await a.api('GET', `/v1/nutrition/meals/${String(m2.id)}`)).json.description === m2edited.description);
    await deleteMeal(b, m2edited, 'A');
    const f = await b.api('POST', '/v1/foods', { name: `Granola ${++seq}`, nutrients: { calories: 450, protein_g: 10, carbs_g: 60, fat_g: 18 } });
    assert.equal(f.status, 201, JSON.stringify(f.json));
    expect('food.created', f.json, 'A');
    await until('the food on A', async () => (await a.api('GET', `/v1/foods/${String(f.json.id)}`)).status === 200);
    const fe = await b.api('PATCH', `/v1/foods/${String(f.json.id)}`, { brand: 'Home' });
    expect('food.updated', fe.json, 'A');
    // A's own change too: the host announces its own writes and the projected ones alike.
    await logMeal(a, 'A');
    // Announced meals that the late phases edit and delete (each record changes once per phase).
    for (let i = 0; i < 3; i++) announced.push(await logMeal(b, 'A'));
    await allDelivered('every change delivered', [[a, subA]]);
    assertExactlyOnce();
    assert.equal(deliveries().length, expected.size);
  });

  test('relay down: meals logged on B meanwhile arrive once it is back, once each', async () => {
    await relay.kill();
    await until('B sees the relay gone', async () => (await b.api('GET', '/v1/sync')).json.connected === false);
    const before = receiver.received.length;
    await logMeal(b, 'A');
    await logMeal(b, 'A');
    await editMeal(b, String(announced[0]!.id), 'A');
    await relay.restart();
    await allDelivered('the offline changes delivered', [[a, subA]]);
    assert.ok(receiver.received.length > before);
    assertExactlyOnce();
    assert.equal(deliveries().length, expected.size);
  });

  test('host off: B\'s meals arrive late, once A is back', async () => {
    await a.stop();
    assert.notEqual(a.serve.child.exitCode, null, 'chyme serve ended on SIGTERM');
    await logMeal(b, 'A');
    await logMeal(b, 'A');
    await editMeal(b, String(announced[1]!.id), 'A');
    await deleteMeal(b, announced[2]!, 'A');
    // The relay has them before the host comes back: they wait there, not on B.
    await until('B has nothing pending', async () => (await b.api('GET', '/v1/sync')).json.pending_changes === 0);
    const received = receiver.received.length;
    await a.restart();
    await allDelivered('the changes made while the host was off', [[a, subA]]);
    assert.ok(receiver.received.length > received);
    assertExactlyOnce();
    assert.equal(deliveries().length, expected.size);
  });

  test('a third device joining late gets the whole history and sends nothing', async () => {
    c = await startDevice(dir, 'attic');
    // C's own meal from before joining is news to the history: the host announces it, once.
    const mc = await logMeal(c, 'A');
    const joined = await c.api('POST', '/v1/sync/join', { pairing_code: code, name: 'attic' });
    assert.equal(joined.status, 200, JSON.stringify(joined.json));
    assert.equal(joined.json.is_webhook_host, false);
    await converged([a, b, c]);
    assert.equal((await a.api('GET', `/v1/nutrition/meals/${String(mc.id)}`)).status, 200);
    const sub = await c.api('POST', '/v1/webhooks', { url: `${receiver.url}?from=C`, events: EVENTS });
    assert.equal(sub.status, 409);
    assert.equal(sub.json.error.code, 'webhook_host_elsewhere');
    // A change after C joined, made on C, still goes out through A.
    await logMeal(c, 'A');
    await allDelivered('C\'s meals delivered by A', [[a, subA]]);
    assertExactlyOnce();
    assert.equal(deliveries().filter((d) => d.from !== 'A').length, 0);
    assert.equal(deliveries().length, expected.size);
  });

  test('handover during a partition: duplicates only with identical ids, then B alone sends', async (t) => {
    // Cut the relay: B takes the host role on its own, and A does not hear of it yet.
    await relay.kill();
    await until('A sees the relay gone', async () => (await a.api('GET', '/v1/sync')).json.connected === false);
    await until('B sees the relay gone', async () => (await b.api('GET', '/v1/sync')).json.connected === false);
    const handover = await b.api('POST', '/v1/sync/webhook-host');
    assert.equal(handover.status, 200, JSON.stringify(handover.json));
    assert.equal(handover.json.is_webhook_host, true);
    // A's subscription (and its secret) stayed on A: B has none until it makes its own.
    assert.equal((await b.api('GET', '/v1/webhooks')).json.data.length, 0);
    const sub = await b.api('POST', '/v1/webhooks', { url: `${receiver.url}?from=B`, events: EVENTS, secret: 'whsec_handover-secret-0123456789abcdef' });
    assert.equal(sub.status, 201, JSON.stringify(sub.json));
    subB = sub.json.id as string;
    // Both believe they are the host now: each sends its own changes, and each will announce the
    // other's once the partition ends; what both send must carry the same id.
    await logMeal(a, 'either', true);
    await logMeal(b, 'either', true);
    await relay.restart();
    await until('A has heard of the handover', async () => (await a.api('GET', '/v1/sync')).json.is_webhook_host === false, 30_000);
    await converged([a, b]);
    await allDelivered('the partition\'s changes delivered', [
      [a, subA],
      [b, subB],
    ]);
    assertExactlyOnce();

    // After the handover has reached everyone: B alone sends, whoever makes the change.
    const fromA = await logMeal(a, 'B');
    await logMeal(b, 'B');
    await logMeal(c!, 'B');
    // The edit waits until B has the meal: B announces states, and a meal it first sees already
    // edited is one meal.created (see above), which a busy machine makes likely here.
    await until("A's meal on B", async () => (await b.api('GET', `/v1/nutrition/meals/${String(fromA.id)}`)).status === 200);
    await editMeal(a, String(fromA.id), 'B');
    await allDelivered('the changes after the handover', [
      [a, subA],
      [b, subB],
    ]);
    assertExactlyOnce();
    const overlap = deliveries().length - expected.size;
    assert.ok(overlap >= 0 && overlap <= window.size, `at most one extra delivery per change of the overlap, got ${overlap}`);
    t.diagnostic(`${deliveries().length} deliveries of ${expected.size} changes; ${overlap} duplicate(s), all within the handover overlap`);
  });

  // The device that joined late dropped every shard from memory after its join: it follows the
  // later changes on top of its stored copies, which must have stayed whole (engine.unload).
  test('the device that joined late converges with the others after the handover', async () => {
    await converged([a, b, c!]);
  });
});
