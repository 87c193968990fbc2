import assert from 'node:assert/strict';
import { after, afterEach, beforeEach, describe, test } from 'node:test';
import { ATTEMPT_TIMEOUT_MS, AUTO_DISABLE_AFTER_MS, MAX_ATTEMPTS, RETRY_DELAYS_MS } from '../../server/webhooks/dispatcher.js';
import { WEBHOOK_DEFAULTS } from '../../server/webhooks/index.js';
import { verifySignature } from '../../server/index.js';
import { ManualClock } from '../../server/clock.js';
import { startTestService, TEST_NOW, type TestService } from '../helpers/service.js';
import { createSubscription, drainWithClock, MEAL, sleep, startReceiver, stripeVerifies, type Receiver } from './helpers.js';

/** The system clock, in the shape the test helper accepts. */
class RealClock extends ManualClock {
  override now(): number {
    return Date.now();
  }
}

describe('retry policy (spec "Retry policy")', () => {
  let t: TestService;
  let rx: Receiver;
  beforeEach(async () => {
    t = await startTestService();
  });
  afterEach(async () => {
    await t.stop();
    await rx?.close();
  });

  test('the policy constants are the spec values', () => {
    assert.deepEqual(RETRY_DELAYS_MS, [1000, 2000, 4000, 8000, 16000]);
    assert.equal(MAX_ATTEMPTS, 6);
    assert.equal(ATTEMPT_TIMEOUT_MS, 10_000);
    assert.equal(WEBHOOK_DEFAULTS.attemptTimeoutMs, 10_000);
    assert.equal(t.service.webhooks.settings.attemptTimeoutMs, 10_000, 'the service runs with the 10 s timeout by default');
    assert.ok(t.service.webhooks.settings.pollIntervalMs <= 250);
  });

  test('6 attempts, 1, 2, 4, 8 and 16 s apart by the injected clock; same delivery id; each signed afresh; then it stops', async () => {
    rx = await startReceiver(() => ({ status: 500 }));
    const sub = await createSubscription(t, { url: rx.url, events: ['meal.created'] });
    await t.request('POST', '/v1/nutrition/meals', { body: MEAL });
    const d = t.service.webhooks.dispatcher;
    await rx.waitFor(1);
    await d.idle();

    const offsets = [0];
    for (const wait of [1000, 2000, 4000, 8000, 16000]) {
      const seen = rx.received.length;
      t.clock.advance(wait - 1);
      await d.runDue();
      assert.equal(rx.received.length, seen, `nothing is sent 1 ms before the ${wait} ms wait ends`);
      t.clock.advance(1);
      await d.runDue();
      assert.equal(rx.received.length, seen + 1, `an attempt is made when the ${wait} ms wait ends`);
      offsets.push(t.clock.now() - TEST_NOW);
    }
    assert.deepEqual(offsets, [0, 1000, 3000, 7000, 15000, 31000]);

    // After the 6th failure: no more attempts, ever.
    t.clock.advance(3600_000);
    await d.runDue();
    await sleep(300);
    assert.equal(rx.received.length, 6);

    const ids = new Set(rx.received.map((r) => r.json.webhook_delivery_id));
    assert.equal(ids.size, 1, 'every attempt carries the same webhook_delivery_id');
    assert.equal(new Set(rx.received.map((r) => r.headers['x-webhook-delivery-id'])).size, 1);
    assert.equal(new Set(rx.received.map((r) => r.body)).size, 1, 'the body is byte-identical on every attempt');
    const stamps = rx.received.map((r) => Number(/^t=(\d+),/.exec(String(r.headers['x-service-signature']))![1]));
    assert.deepEqual(
      stamps.map((s) => s - Math.floor(TEST_NOW / 1000)),
      [0, 1, 3, 7, 15, 31],
      'each attempt is signed with its own timestamp',
    );
    rx.received.forEach((r, i) => {
      const at = TEST_NOW + offsets[i]!;
      assert.ok(stripeVerifies(r, sub.secret, at), `attempt ${i + 1} verifies`);
      assert.ok(verifySignature(r.body, r.headers['x-service-signature'], sub.secret, { now: at }));
    });

    const log = (await t.request('GET', `/v1/webhooks/${sub.id}/deliveries`)).body.data[0];
    assert.equal(log.status, 'failed');
    assert.equal(log.attempt_count, 6);
    assert.equal(log.next_attempt_at, null);
    assert.deepEqual(
      log.attempts.map((a: any) => Date.parse(a.started_at) - TEST_NOW),
      [0, 1000, 3000, 7000, 15000, 31000],
      'recorded attempt times',
    );
    assert.ok(log.attempts.every((a: any) => a.outcome === 'failed' && a.status_code === 500));
  });

  test('a success ends the retries', async () => {
    let n = 0;
    rx = await startReceiver(() => ({ status: ++n < 3 ? 502 : 200 }));
    const sub = await createSubscription(t, { url: rx.url, events: ['meal.created'] });
    await t.request('POST', '/v1/nutrition/meals', { body: MEAL });
    await drainWithClock(t);
    assert.equal(rx.received.length, 3);
    t.clock.advance(120_000);
    await t.service.webhooks.dispatcher.runDue();
    assert.equal(rx.received.length, 3, 'nothing after the success');
    const log = (await t.request('GET', `/v1/webhooks/${sub.id}/deliveries`)).body.data[0];
    assert.equal(log.status, 'succeeded');
    assert.deepEqual(log.attempts.map((a: any) => a.outcome), ['failed', 'failed', 'succeeded']);
  });
});

describe('timeouts and independence (real time)', () => {
  let t: TestService;
  const receivers: Receiver[] = [];
  beforeEach(async () => {
    t = await startTestService();
  });
  afterEach(async () => {
    await t.stop();
    for (const r of receivers.splice(0)) await r.close();
  });

  test('an attempt times out after 10 s (the default, not shortened)', async () => {
    const silent = await startReceiver(() => ({ hang: true }));
    receivers.push(silent);
    const sub = await createSubscription(t, { url: silent.url, events: ['meal.created'] });
    const started = Date.now();
    const res = await t.request('POST', `/v1/webhooks/${sub.id}/test`);
    const took = Date.now() - started;
    assert.equal(res.body.delivered, false);
    assert.equal(res.body.status_code, null);
    assert.match(res.body.error, /timed out after 10 s/);
    // Not before 10 s (the timeout is not shortened); the upper bounds only tell 10 s from a longer
    // timeout (the next one a reader would pick, 15 s or 30 s), so a loaded machine's delay in
    // answering is not mistaken for a wrong timeout.
    assert.ok(res.body.duration_ms >= 9_990 && res.body.duration_ms < 15_000, `duration_ms ${res.body.duration_ms}`);
    assert.ok(took >= 9_990 && took < 15_000, `took ${took} ms`);
    assert.equal(silent.received.length, 1);
  });

  test('a dead receiver delays neither the API nor a healthy receiver', async () => {
    const dead = await startReceiver(() => ({ hang: true }));
    const healthy = await startReceiver();
    receivers.push(dead, healthy);
    await createSubscription(t, { url: dead.url, events: ['meal.created'] });
    await createSubscription(t, { url: healthy.url, events: ['meal.created'] });
    const latencies: number[] = [];
    const apiTimes: number[] = [];
    for (let i = 0; i < 10; i++) {
      const before = Date.now();
      const res = await t.request('POST', '/v1/nutrition/meals', { body: { ...MEAL, description: `meal ${i}` } });
      apiTimes.push(Date.now() - before);
      assert.equal(res.status, 201);
      await healthy.waitFor(i + 1, 10_000);
      latencies.push(healthy.received[i]!.at - before);
    }
    // Ten deliveries hang at the dead receiver (its in-flight budget is full) while the healthy
    // one got every event at once.
    assert.ok(dead.received.length >= 1);
    assert.equal(healthy.received.length, 10);
    // Waiting behind the dead receiver would take its attempt timeout, 10 s, per hanging attempt:
    // that, not a speed, is what the bound tells apart (figures are printed, not asserted).
    const max = Math.max(...latencies);
    assert.ok(max < ATTEMPT_TIMEOUT_MS, `healthy delivery latency ${latencies.join(', ')} ms`);
    assert.ok(Math.max(...apiTimes) < ATTEMPT_TIMEOUT_MS, `API latency ${apiTimes.join(', ')} ms`);
    console.log(`# healthy receiver latency (request start → received): median ${latencies.sort((a, b) => a - b)[5]} ms, max ${max} ms; API max ${Math.max(...apiTimes)} ms`);
  });

  test('real-time retry spacing with the system clock is 1, 2, 4 s after each failed attempt ends', async () => {
    await t.stop();
    t = await startTestService({ clock: new RealClock(0) });
    let n = 0;
    const rx = await startReceiver(() => ({ status: ++n <= 3 ? 500 : 204 }));
    receivers.push(rx);
    const sub = await createSubscription(t, { url: rx.url, events: ['meal.created'] });
    await t.request('POST', '/v1/nutrition/meals', { body: { ...MEAL, timestamp: new Date().toISOString() } });
    await rx.waitFor(4, 30_000);
    await t.service.webhooks.dispatcher.idle();
    const gaps = rx.received.slice(1).map((r, i) => r.at - rx.received[i]!.at);
    const attempts = (await t.request('GET', `/v1/webhooks/${sub.id}/deliveries`)).body.data[0].attempts;
    const lateness = attempts.slice(1).map((a: any, i: number) => Date.parse(a.started_at) - Date.parse(attempts[i].finished_at) - RETRY_DELAYS_MS[i]!);
    console.log(`# real retry gaps at the receiver: ${gaps.join(', ')} ms; next attempt started ${lateness.join(', ')} ms after its due time`);
    // Never early; and each gap is its own step of the schedule, not the next one (which doubles
    // it). How late a loaded machine's timers fire is printed above, not asserted.
    [1000, 2000, 4000].forEach((want, i) => assert.ok(gaps[i]! >= want && gaps[i]! < 2 * want, `gap ${i + 1}: ${gaps[i]} ms`));
    lateness.forEach((late: number, i: number) => assert.ok(late >= 0 && late < RETRY_DELAYS_MS[i]!, `attempt ${i + 2} started ${late} ms after due`));
  });
});

describe('automatic disabling and secret rotation', () => {
  let t: TestService;
  let rx: Receiver;
  beforeEach(async () => {
    t = await startTestService();
  });
  afterEach(async () => {
    await t.stop();
    await rx?.close();
  });

  // Emitted straight through the bus: the engine never announces meal.updated on its own, so
  // nothing else lands on these subscriptions while the clock jumps days ahead.
  const emitEvent = () =>
    t.service.app.bus.write((emit) => emit('meal.updated', { object: 'nutrition.meal', id: 'meal_fake', description: 'x' }));

  test('a subscription whose deliveries all failed for 3 days is disabled, with a reason the app shows', async () => {
    let up = false;
    rx = await startReceiver(() => ({ status: up ? 200 : 500 }));
    const sub = await createSubscription(t, { url: rx.url, events: ['meal.updated'] });
    const notices: any[] = [];
    t.service.webhooks.notices.subscribe((n) => notices.push(n));

    emitEvent();
    await drainWithClock(t);
    t.clock.advance(2 * 24 * 3600_000);
    emitEvent();
    await drainWithClock(t);
    let s = (await t.request('GET', `/v1/webhooks/${sub.id}`)).body;
    assert.equal(s.status, 'enabled', 'two days of failures are not enough');

    // A success resets the clock; a new run of failures starts after it.
    up = true;
    emitEvent();
    await drainWithClock(t);
    up = false;
    emitEvent();
    await drainWithClock(t);
    t.clock.advance(2 * 24 * 3600_000);
    emitEvent();
    await drainWithClock(t);
    assert.equal((await t.request('GET', `/v1/webhooks/${sub.id}`)).body.status, 'enabled', 'two days since the success');

    // Three full days of nothing but failures.
    t.clock.advance(AUTO_DISABLE_AFTER_MS - 2 * 24 * 3600_000);
    emitEvent();
    await drainWithClock(t);
    s = (await t.request('GET', `/v1/webhooks/${sub.id}`)).body;
    assert.equal(s.status, 'disabled');
    assert.match(s.disabled_reason, /failed .*3 days/);
    assert.equal(s.disabled_at, new Date(Math.floor(t.clock.now() / 1000) * 1000).toISOString().replace('.000Z', 'Z'));
    const notice = notices.find((n) => n.type === 'webhook_subscription.disabled');
    assert.ok(notice, 'the app is told live');
    assert.equal(notice.object.id, sub.id);
    assert.equal(notice.object.disabled_reason, s.disabled_reason);

    // Disabled: new events make no deliveries.
    const before = rx.received.length;
    emitEvent();
    await drainWithClock(t);
    assert.equal(rx.received.length, before);

    // The user fixes the receiver, tests it, and enables the webhook again.
    up = true;
    assert.equal((await t.request('POST', `/v1/webhooks/${sub.id}/test`)).body.delivered, true);
    const enabled = (await t.request('PATCH', `/v1/webhooks/${sub.id}`, { body: { status: 'enabled' } })).body;
    assert.equal(enabled.status, 'enabled');
    assert.equal(enabled.disabled_reason, null);
    emitEvent();
    await drainWithClock(t);
    assert.equal(rx.received.at(-1)!.json.type, 'meal.updated');
  });

  test('secret rotation: both secrets sign (two v1=) for 24 h, then only the new one', async () => {
    rx = await startReceiver();
    const sub = await createSubscription(t, { url: rx.url, events: ['meal.updated'], secret: 'old-secret-0123456789' });
    const rotated = await t.request('PATCH', `/v1/webhooks/${sub.id}`, { body: { secret: 'new-secret-0123456789' } });
    assert.equal(rotated.status, 200);
    assert.equal(rotated.body.secret, undefined);
    assert.equal(rotated.body.previous_secret_expires_at, '2026-11-23T12:00:00Z');

    emitEvent();
    await drainWithClock(t);
    const during = rx.received.at(-1)!;
    assert.match(String(during.headers['x-service-signature']), /^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    assert.ok(stripeVerifies(during, 'new-secret-0123456789', t.clock.now()), 'a receiver on the new secret accepts it');
    assert.ok(stripeVerifies(during, 'old-secret-0123456789', t.clock.now()), 'a receiver still on the old secret accepts it');
    assert.ok(verifySignature(during.body, during.headers['x-service-signature'], 'old-secret-0123456789', { now: t.clock.now() }));

    t.clock.advance(24 * 3600_000 - 1000);
    emitEvent();
    await drainWithClock(t);
    assert.equal(String(rx.received.at(-1)!.headers['x-service-signature']).split(',').length, 3, 'still two v1= just before 24 h');

    t.clock.advance(1000);
    emitEvent();
    await drainWithClock(t);
    const afterwards = rx.received.at(-1)!;
    assert.match(String(afterwards.headers['x-service-signature']), /^t=\d+,v1=[0-9a-f]{64}$/);
    assert.ok(stripeVerifies(afterwards, 'new-secret-0123456789', t.clock.now()));
    assert.equal(stripeVerifies(afterwards, 'old-secret-0123456789', t.clock.now()), false);
    assert.equal((await t.request('GET', `/v1/webhooks/${sub.id}`)).body.previous_secret_expires_at, null);
  });
});

describe('restart (in process): pending deliveries resume, an interrupted attempt is retried, none is re-sent', () => {
  let dir: string;
  after(async () => {
    const { rmSync } = await import('node:fs');
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('stop during an in-flight attempt, start again on the same database', async () => {
    const { mkdtempSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    dir = mkdtempSync(join(tmpdir(), 'chyme-restart-'));
    let mode: 'fail' | 'hang' | 'ok' = 'fail';
    const rx = await startReceiver(() => (mode === 'fail' ? { status: 500 } : mode === 'hang' ? { hang: true } : { status: 200 }));
    try {
      let t = await startTestService({ dir });
      const sub = await createSubscription(t, { url: rx.url, events: ['meal.created'] });
      await t.request('POST', '/v1/nutrition/meals', { body: MEAL });
      await rx.waitFor(1);
      await t.service.webhooks.dispatcher.idle();
      mode = 'hang';
      t.clock.advance(1000);
      t.service.webhooks.dispatcher.wake();
      await rx.waitFor(2);
      await t.stop(); // interrupts the hanging second attempt

      mode = 'ok';
      t = await startTestService({ dir, now: TEST_NOW + 5000 });
      await rx.waitFor(3);
      await t.service.webhooks.dispatcher.idle();
      const log = (await t.request('GET', `/v1/webhooks/${sub.id}/deliveries`)).body.data[0];
      assert.equal(log.status, 'succeeded');
      assert.deepEqual(log.attempts.map((a: any) => a.outcome), ['failed', 'interrupted', 'succeeded']);
      assert.equal(new Set(rx.received.map((r) => r.json.webhook_delivery_id)).size, 1);
      await t.stop();

      // A third start: nothing left to send.
      t = await startTestService({ dir, now: TEST_NOW + 3600_000 });
      await t.service.webhooks.dispatcher.runDue();
      await sleep(300);
      assert.equal(rx.received.length, 3);
      await t.stop();
    } finally {
      await rx.close();
    }
  });
});
