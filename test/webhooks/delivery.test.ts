import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { EVENT_TYPES } from '../../server/events/types.js';
import { verifySignature } from '../../server/index.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { createSubscription, drainWithClock, MEAL, startReceiver, stripeVerifies, type Receiver, type Received } from './helpers.js';

const ISO_SECONDS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

describe('webhook deliveries', () => {
  let t: TestService;
  let rx: Receiver;
  beforeEach(async () => {
    t = await startTestService();
    rx = await startReceiver();
  });
  afterEach(async () => {
    await t.stop();
    await rx.close();
  });

  test('consecutive deliveries to one http receiver reuse one kept-alive connection', async () => {
    await createSubscription(t, { url: rx.url, events: ['meal.created'] });
    for (let i = 1; i <= 3; i++) {
      assert.equal((await t.request('POST', '/v1/nutrition/meals', { body: MEAL })).status, 201);
      await rx.waitFor(i);
      await t.service.webhooks.dispatcher.idle();
    }
    const ports = new Set(rx.received.map((r) => r.remotePort));
    assert.equal(ports.size, 1, `three attempts came over ${ports.size} connections`);
    assert.notEqual(rx.received[0]!.headers.connection, 'close');
  });

  test('meal.created/updated/deleted from the meals API arrive with the CONTRACT §7 envelope and headers', async () => {
    const sub = await createSubscription(t, { url: rx.url, events: ['meal.created', 'meal.updated', 'meal.deleted'] });
    const created = await t.request('POST', '/v1/nutrition/meals', { body: MEAL });
    assert.equal(created.status, 201);
    await t.request('PATCH', `/v1/nutrition/meals/${created.body.id}`, { body: { description: 'Lentil soup, bread' } });
    await t.request('DELETE', `/v1/nutrition/meals/${created.body.id}`);
    await rx.waitFor(3);
    await t.service.webhooks.dispatcher.idle();

    const types = rx.received.map((r) => r.json.type).sort();
    assert.deepEqual(types, ['meal.created', 'meal.deleted', 'meal.updated']);
    for (const r of rx.received) {
      assert.equal(r.method, 'POST');
      assert.equal(r.path, '/hook');
      assert.equal(r.headers['content-type'], 'application/json');
      assert.equal(r.headers['x-webhook-event'], r.json.type);
      assert.equal(r.headers['x-webhook-delivery-id'], r.json.webhook_delivery_id);
      assert.match(String(r.headers['user-agent']), /^Chyme-Webhooks\//);
      assert.match(String(r.headers['x-service-signature']), /^t=\d+,v1=[0-9a-f]{64}$/);
      // Envelope: exactly these keys, in this order.
      assert.deepEqual(Object.keys(r.json), ['object', 'id', 'type', 'created', 'webhook_delivery_id', 'data']);
      assert.equal(r.json.object, 'event');
      assert.match(r.json.id, /^evt_/);
      assert.match(r.json.webhook_delivery_id, /^whdel_/);
      assert.match(r.json.created, ISO_SECONDS);
      assert.equal(r.json.data.object.object, 'nutrition.meal');
      assert.equal(r.json.data.object.id, created.body.id);
      assert.ok(stripeVerifies(r, sub.secret, t.clock.now()), 'Stripe verifies the signature');
      assert.ok(verifySignature(r.body, r.headers['x-service-signature'], sub.secret, { now: t.clock.now() }));
    }
    const created_ = rx.received.find((r) => r.json.type === 'meal.created')!;
    assert.deepEqual(created_.json.data.object, created.body);
    const updated = rx.received.find((r) => r.json.type === 'meal.updated')!;
    assert.equal(updated.json.data.object.description, 'Lentil soup, bread');
    assert.deepEqual(updated.json.data.previous_attributes, { description: 'Lentil soup' });
    const deleted = rx.received.find((r) => r.json.type === 'meal.deleted')!;
    assert.equal(deleted.json.data.object.deleted, true);
  });

  test('the signature is exactly HMAC-SHA256(secret, "<t>.<raw body>") with t = the attempt time', async () => {
    const { createHmac } = await import('node:crypto');
    const sub = await createSubscription(t, { url: rx.url, events: ['meal.created'], secret: 'a-very-secret-secret-0123' });
    await t.request('POST', '/v1/nutrition/meals', { body: MEAL });
    const [r] = await rx.waitFor(1);
    const header = String(r!.headers['x-service-signature']);
    const [, ts, digest] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header)!;
    assert.equal(Number(ts), Math.floor(t.clock.now() / 1000));
    const expected = createHmac('sha256', sub.secret).update(`${ts}.${r!.body}`).digest('hex');
    assert.equal(digest, expected);
    assert.equal(stripeVerifies(r!, 'the-wrong-secret-0000', t.clock.now()), false);

    // Any secret of 16–256 characters without control characters works, spaces and non-ASCII too.
    const odd = await createSubscription(t, { url: rx.url, events: ['meal.created'], secret: 'grüne Bohnen & Linsen 42' });
    assert.equal(odd.secret, 'grüne Bohnen & Linsen 42');
    const res = await t.request('POST', `/v1/webhooks/${odd.id}/test`);
    assert.equal(res.body.delivered, true);
    const ping = rx.received.at(-1)!;
    assert.ok(stripeVerifies(ping, odd.secret, t.clock.now()));
    assert.ok(verifySignature(ping.body, ping.headers['x-service-signature'], odd.secret, { now: t.clock.now() }));
  });

  test('every event type reaches the subscriptions that list it, and only those', async () => {
    const all = EVENT_TYPES.filter((e) => e !== 'test.ping');
    const rxAll = rx;
    const rxDigestion = await startReceiver();
    try {
      const subAll = await createSubscription(t, { url: rxAll.url, events: [...all] });
      const subDig = await createSubscription(t, { url: rxDigestion.url, events: ['digestion.state_changed', 'windows.updated'] });
      const meal = (await t.request('POST', '/v1/nutrition/meals', { body: MEAL })).body;
      await t.request('PATCH', `/v1/nutrition/meals/${meal.id}`, { body: { meal_type: 'dinner' } });
      await t.request('DELETE', `/v1/nutrition/meals/${meal.id}`);
      await t.request('PATCH', '/v1/settings', { body: { units: 'imperial' } });
      const food = (await t.request('POST', '/v1/foods', { body: { name: 'Oat cookie', nutrients: { calories: 450 } } })).body;
      await t.request('PATCH', `/v1/foods/${food.id}`, { body: { brand: 'Acme' } });
      await t.request('DELETE', `/v1/foods/${food.id}`);
      // Digestion events come from the engine too (after the meal writes above); these, marked,
      // go through the same seam so every type is covered whatever the engine announces.
      t.service.app.bus.write((emit) => {
        emit('gut_score.created', { object: 'digestion.score', date: '2026-11-21', score: 82, score_state: 'SCORED', level: 'good', marker: 'x' });
        emit('overnight_score.created', { object: 'digestion.overnight_score', id: 'ovn_1', date: '2026-11-22', score: 77, marker: 'x' });
        emit(
          'digestion.state_changed',
          { object: 'digestion.state', state: 'processing', minutes_remaining: 180, confidence: 0.8, active_meals: 1, since: '2026-11-22T11:30:00Z', fasted_at: '2026-11-22T16:30:00Z', marker: 'x' },
          { previousAttributes: { state: 'fasted' } },
        );
        emit('windows.updated', { object: 'digestion.windows', sleep_ready_at: '2026-11-22T21:00:00Z', marker: 'x' });
        // Sync's events come from another device's changes (test/sync covers them end to end).
        emit('sync.device_joined', { object: 'sync.device', device_id: 'dev_1', device_name: 'Laptop', marker: 'x' });
        emit('sync.device_left', { object: 'sync.device', device_id: 'dev_1', device_name: 'Laptop', marker: 'x' });
        emit('sync.webhook_host_changed', { object: 'sync.webhook_host', device_id: 'dev_1', device_name: 'Laptop', marker: 'x' });
        emit('sync.status_changed', { object: 'sync.status', connected: true, last_error: null, marker: 'x' });
      });
      const marked = (list: Received[]) =>
        list.filter((r) => r.json.data.object.marker === 'x' || r.json.type.startsWith('meal.') || r.json.type.startsWith('food.') || r.json.type === 'settings.updated');
      await rxAll.waitUntil((l) => marked(l).length >= all.length);
      await rxDigestion.waitUntil((l) => marked(l).length >= 2);
      await t.service.webhooks.dispatcher.idle();
      assert.deepEqual(marked(rxAll.received).map((r) => r.json.type).sort(), [...all].sort());
      assert.deepEqual(marked(rxDigestion.received).map((r) => r.json.type).sort(), ['digestion.state_changed', 'windows.updated']);
      assert.ok(
        rxDigestion.received.every((r) => r.json.type === 'digestion.state_changed' || r.json.type === 'windows.updated'),
        'nothing it did not subscribe to',
      );
      for (const r of rxAll.received) assert.ok(stripeVerifies(r, subAll.secret, t.clock.now()), r.json.type);
      for (const r of rxDigestion.received) assert.ok(stripeVerifies(r, subDig.secret, t.clock.now()), r.json.type);
      const state = marked(rxDigestion.received).find((r) => r.json.type === 'digestion.state_changed')!;
      assert.equal(state.json.data.object.state, 'processing');
      assert.deepEqual(state.json.data.previous_attributes, { state: 'fasted' });
      // One event, two subscriptions: same event id, different delivery ids.
      const a = marked(rxAll.received).find((r) => r.json.type === 'windows.updated')!;
      const b = marked(rxDigestion.received).find((r) => r.json.type === 'windows.updated')!;
      assert.equal(a.json.id, b.json.id);
      assert.notEqual(a.json.webhook_delivery_id, b.json.webhook_delivery_id);
    } finally {
      await rxDigestion.close();
    }
  });

  test('the outbox row is written in the transaction of the change, before any attempt; a rolled-back change sends nothing', async () => {
    await createSubscription(t, { url: rx.url, events: ['meal.deleted'] });
    const db = t.service.app.db;
    const count = () => (db.prepare('SELECT COUNT(*) AS n FROM webhook_deliveries').get() as { n: number }).n;
    assert.throws(() =>
      t.service.app.bus.write((emit) => {
        emit('meal.deleted', { object: 'nutrition.meal', id: 'meal_gone', deleted: true });
        throw new Error('the change fails');
      }),
    );
    assert.equal(count(), 0);
    t.service.app.bus.write((emit) => emit('meal.deleted', { object: 'nutrition.meal', id: 'meal_gone', deleted: true }));
    // Synchronously after commit: stored, pending, not attempted yet.
    const row = db.prepare('SELECT status, attempt_count, next_attempt_ms FROM webhook_deliveries').get() as any;
    assert.deepEqual(row, { status: 'pending', attempt_count: 0, next_attempt_ms: t.clock.now() });
    await rx.waitFor(1);
    await t.service.webhooks.dispatcher.idle();
    assert.equal(count(), 1);
    assert.equal(rx.received.length, 1);
  });

  test('a disabled subscription gets nothing; test.ping is never fanned out', async () => {
    const sub = await createSubscription(t, { url: rx.url, events: ['meal.created', 'test.ping'] });
    await t.request('PATCH', `/v1/webhooks/${sub.id}`, { body: { status: 'disabled' } });
    await t.request('POST', '/v1/nutrition/meals', { body: MEAL });
    t.service.app.bus.write((emit) => emit('test.ping', { object: 'webhook_ping' }));
    await t.service.webhooks.dispatcher.runDue();
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(rx.received.length, 0);
    const log = await t.request('GET', `/v1/webhooks/${sub.id}/deliveries`);
    assert.equal(log.body.data.length, 0);
  });

  test('a redirect is not followed and counts as a failure', async () => {
    const target = await startReceiver();
    const redirecting = await startReceiver(() => ({ status: 302, headers: { location: target.url } }));
    try {
      const sub = await createSubscription(t, { url: redirecting.url, events: ['meal.created'] });
      const test_ = await t.request('POST', `/v1/webhooks/${sub.id}/test`);
      assert.equal(test_.body.delivered, false);
      assert.equal(test_.body.status_code, 302);
      assert.match(test_.body.error, /redirect.*not followed/);
      await t.request('POST', '/v1/nutrition/meals', { body: MEAL });
      await drainWithClock(t);
      assert.equal(target.received.length, 0, 'the redirect target was never called');
      assert.equal(redirecting.received.length, 1 + 6);
      const log = (await t.request('GET', `/v1/webhooks/${sub.id}/deliveries?status=failed`)).body.data;
      const mealDelivery = log.find((d: any) => d.event_type === 'meal.created');
      assert.equal(mealDelivery.status, 'failed');
      assert.ok(mealDelivery.attempts.every((a: any) => a.status_code === 302 && a.outcome === 'failed'));
    } finally {
      await target.close();
      await redirecting.close();
    }
  });

  test('only 2xx is success: 204 and 299 acknowledge; 4xx and 5xx do not', async () => {
    const statuses = [204, 299, 400, 404, 410, 500, 503];
    for (const status of statuses) {
      const r = await startReceiver(() => ({ status }));
      try {
        const sub = await createSubscription(t, { url: r.url, events: ['meal.created'] });
        const res = await t.request('POST', `/v1/webhooks/${sub.id}/test`);
        assert.equal(res.body.delivered, status < 300, `status ${status}`);
        assert.equal(res.body.status_code, status);
        await t.request('DELETE', `/v1/webhooks/${sub.id}`);
      } finally {
        await r.close();
      }
    }
  });

  test('POST /test sends one signed test.ping synchronously and logs it', async () => {
    const sub = await createSubscription(t, { url: rx.url, events: ['meal.created'] });
    const res = await t.request('POST', `/v1/webhooks/${sub.id}/test`);
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body).sort(), ['certificate_sha256', 'delivered', 'duration_ms', 'object', 'status_code', 'webhook_delivery_id']);
    assert.equal(res.body.object, 'webhook_test');
    assert.equal(res.body.delivered, true);
    assert.equal(res.body.status_code, 200);
    assert.ok(Number.isInteger(res.body.duration_ms) && res.body.duration_ms >= 0);
    assert.equal(rx.received.length, 1, 'delivered before the response');
    const r = rx.received[0]!;
    assert.equal(r.json.type, 'test.ping');
    assert.equal(r.headers['x-webhook-event'], 'test.ping');
    assert.equal(r.json.webhook_delivery_id, res.body.webhook_delivery_id);
    assert.equal(r.json.data.object.object, 'webhook_ping');
    assert.equal(r.json.data.object.subscription_id, sub.id);
    assert.ok(stripeVerifies(r, sub.secret, t.clock.now()));

    const down = await startReceiver();
    const deadUrl = down.url;
    await down.close();
    const dead = await createSubscription(t, { url: deadUrl, events: ['meal.created'] });
    const failed = await t.request('POST', `/v1/webhooks/${dead.id}/test`);
    assert.equal(failed.body.delivered, false);
    assert.equal(failed.body.status_code, null);
    assert.equal(failed.body.error, 'connection refused');

    const log = (await t.request('GET', `/v1/webhooks/${sub.id}/deliveries`)).body;
    assert.equal(log.data[0].id, res.body.webhook_delivery_id);
    assert.equal(log.data[0].kind, 'test');
    assert.equal(log.data[0].status, 'succeeded');
    assert.equal(log.data[0].attempts.length, 1);
  });

  test('the delivery log shows every attempt (time, status, duration, error), pages, and redelivers', async () => {
    let fail = true;
    const flaky = await startReceiver(() => ({ status: fail ? 503 : 200 }));
    try {
      const sub = await createSubscription(t, { url: flaky.url, events: ['meal.created'] });
      await t.request('POST', '/v1/nutrition/meals', { body: MEAL });
      await t.service.webhooks.dispatcher.idle();
      t.clock.advance(1000);
      await t.service.webhooks.dispatcher.runDue();
      fail = false;
      t.clock.advance(2000);
      await t.service.webhooks.dispatcher.runDue();
      assert.equal(flaky.received.length, 3);

      const list = await t.request('GET', `/v1/webhooks/${sub.id}/deliveries`);
      assert.equal(list.status, 200);
      assert.equal(list.body.object, 'list');
      const d = list.body.data[0];
      assert.equal(d.object, 'webhook_delivery');
      assert.equal(d.status, 'succeeded');
      assert.equal(d.event_type, 'meal.created');
      assert.equal(d.attempt_count, 3);
      assert.equal(d.next_attempt_at, null);
      assert.deepEqual(
        d.attempts.map((a: any) => [a.attempt, a.started_at, a.outcome, a.status_code]),
        [
          [1, '2026-11-22T12:00:00.000Z', 'failed', 503],
          [2, '2026-11-22T12:00:01.000Z', 'failed', 503],
          [3, '2026-11-22T12:00:03.000Z', 'succeeded', 200],
        ],
      );
      assert.match(d.attempts[0].error, /HTTP 503/);
      assert.equal(d.attempts[2].error, null);
      assert.ok(d.attempts.every((a: any) => Number.isInteger(a.duration_ms) && typeof a.finished_at === 'string'));

      const one = await t.request('GET', `/v1/webhooks/${sub.id}/deliveries/${d.id}`);
      assert.deepEqual(one.body, d);

      const again = await t.request('POST', `/v1/webhooks/${sub.id}/deliveries/${d.id}/redeliver`);
      assert.equal(again.status, 201);
      assert.equal(again.body.kind, 'redelivery');
      assert.equal(again.body.redelivery_of, d.id);
      assert.equal(again.body.status, 'pending');
      assert.notEqual(again.body.id, d.id);
      await flaky.waitFor(4);
      await t.service.webhooks.dispatcher.idle();
      const redelivered = flaky.received[3]!;
      assert.equal(redelivered.json.webhook_delivery_id, again.body.id, 'a new delivery id, so deduplicating receivers process it');
      assert.equal(redelivered.json.id, flaky.received[0]!.json.id, 'the same event');
      assert.deepEqual(redelivered.json.data, flaky.received[0]!.json.data);
      assert.ok(stripeVerifies(redelivered, sub.secret, t.clock.now()));

      const page1 = await t.request('GET', `/v1/webhooks/${sub.id}/deliveries?limit=1`);
      assert.equal(page1.body.data.length, 1);
      assert.equal(page1.body.has_more, true);
      assert.equal(page1.body.data[0].id, again.body.id, 'newest first');
      const page2 = await t.request('GET', `/v1/webhooks/${sub.id}/deliveries?limit=1&starting_after=${page1.body.data[0].id}`);
      assert.equal(page2.body.data[0].id, d.id);
      assert.equal(page2.body.has_more, false);
      const badCursor = await t.request('GET', `/v1/webhooks/${sub.id}/deliveries?starting_after=whdel_nope`);
      assert.equal(badCursor.status, 400);
      assert.equal(badCursor.body.error.code, 'invalid_cursor');
      const badLimit = await t.request('GET', `/v1/webhooks/${sub.id}/deliveries?limit=0`);
      assert.equal(badLimit.body.error.param, 'limit');

      await t.request('PATCH', `/v1/webhooks/${sub.id}`, { body: { status: 'disabled' } });
      const refused = await t.request('POST', `/v1/webhooks/${sub.id}/deliveries/${d.id}/redeliver`);
      assert.equal(refused.status, 409);
      assert.equal(refused.body.error.code, 'webhook_disabled');
    } finally {
      await flaky.close();
    }
  });
});
