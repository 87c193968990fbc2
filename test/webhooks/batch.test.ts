/**
 * The dispatcher works in turns: one commit records the outcomes of every attempt that ended
 * since the last turn and claims every due delivery the budgets allow; only then do the claimed
 * requests leave. These tests hold it to what that must not change: every outcome of a turn is
 * recorded with what follows from it, budgets still bound each subscription, and a process that
 * dies after a batched claim was committed still delivers every claimed delivery, once.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { openDatabase } from '../../server/db/connection.js';
import { eventEnvelope } from '../../server/events/bus.js';
import { RETRY_DELAYS_MS, type WebhookNotice } from '../../server/webhooks/dispatcher.js';
import { WEBHOOK_DEFAULTS } from '../../server/webhooks/index.js';
import { deliveryBodies } from '../../server/webhooks/outbox.js';
import { startTestService, TEST_NOW } from '../helpers/service.js';
import { createSubscription, MEAL, sleep, startReceiver, type Receiver } from './helpers.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function until(what: string, pred: () => boolean, timeoutMs = 20_000): Promise<void> {
  const start = Date.now();
  while (!pred()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting until ${what}`);
    await sleep(5);
  }
}

interface Row {
  id: string;
  subscription_id: string;
  status: string;
  next_attempt_ms: number | null;
  attempt_count: number;
  outcomes: string | null;
  codes: string | null;
}

test('one turn claims for several subscriptions at once; every outcome that ends together is recorded, with its retry; budgets hold', async () => {
  const budget = WEBHOOK_DEFAULTS.maxInFlightPerSubscription;
  const meals = budget + 2;
  const receivers: Receiver[] = [];
  const t = await startTestService({ keepDir: true });
  dirs.push(t.dir);
  try {
    const ok = await startReceiver(() => ({ status: 200 }));
    const failing = await startReceiver(() => ({ status: 500 }));
    const hanging = await startReceiver(() => ({ hang: true }));
    receivers.push(ok, failing, hanging);
    const subOk = await createSubscription(t, { url: ok.url, events: ['meal.created'] });
    const subFailing = await createSubscription(t, { url: failing.url, events: ['meal.created'] });
    const subHanging = await createSubscription(t, { url: hanging.url, events: ['meal.created'] });
    const notices: WebhookNotice[] = [];
    t.service.webhooks.notices.subscribe((n) => notices.push(n));

    // Stored while the loop is held, so that the turn that resumes it finds them all due at once.
    const d = t.service.webhooks.dispatcher;
    await d.pause();
    for (let i = 0; i < meals; i++) assert.equal((await t.request('POST', '/v1/nutrition/meals', { body: { ...MEAL, description: `meal ${i}` } })).status, 201);
    d.resume();

    const db = t.service.app.db;
    const rows = () =>
      db
        .prepare(
          `SELECT d.id, d.subscription_id, d.status, d.next_attempt_ms, d.attempt_count,
                  (SELECT group_concat(COALESCE(a.outcome, 'open'), ',') FROM webhook_attempts a WHERE a.delivery_id = d.id) AS outcomes,
                  (SELECT group_concat(a.status_code, ',') FROM webhook_attempts a WHERE a.delivery_id = d.id) AS codes
             FROM webhook_deliveries d ORDER BY d.seq`,
        )
        .all() as Row[];
    const of = (sub: { id: string }) => rows().filter((r) => r.subscription_id === sub.id);
    await until('the answering receivers\' outcomes are all recorded', () =>
      [...of(subOk), ...of(subFailing)].every((r) => r.outcomes === 'succeeded' || r.outcomes === 'failed'),
    );

    // The receiver that answers: every delivery succeeded, once.
    assert.equal(ok.received.length, meals);
    for (const r of of(subOk)) assert.deepEqual([r.status, r.outcomes, r.codes, r.next_attempt_ms], ['succeeded', 'succeeded', '200', null]);
    // The one that fails: every first attempt recorded as failed, each retry due 1 s after it ended.
    assert.equal(failing.received.length, meals);
    for (const r of of(subFailing)) {
      assert.deepEqual([r.status, r.outcomes, r.codes, r.attempt_count], ['pending', 'failed', '500', 1]);
      assert.equal(r.next_attempt_ms, TEST_NOW + RETRY_DELAYS_MS[0]!);
    }
    // The one that hangs: exactly its budget in flight (claimed, no outcome yet), the rest still waiting.
    await hanging.waitFor(budget);
    await sleep(50);
    assert.equal(hanging.received.length, budget);
    const hung = of(subHanging);
    assert.equal(hung.filter((r) => r.outcomes === 'open' && r.next_attempt_ms === null).length, budget);
    assert.equal(hung.filter((r) => r.outcomes === null && r.next_attempt_ms === TEST_NOW).length, meals - budget);
    assert.equal(d.inFlightCount, budget);

    // A notice per recorded outcome, with the status the commit left.
    const updated = notices.filter((n) => n.type === 'webhook_delivery.updated').map((n) => n.object);
    assert.equal(updated.length, 2 * meals);
    for (const r of [...of(subOk), ...of(subFailing)]) {
      assert.deepEqual(
        updated.filter((o) => o.id === r.id),
        [{ object: 'webhook_delivery', id: r.id, subscription_id: r.subscription_id, status: r.status }],
      );
    }

    // Stopping interrupts the hanging attempts; their outcomes are recorded too, before stop resolves.
    await t.stop();
    const after = openDatabase(t.dbPath, { readonly: true });
    try {
      const outcomes = after
        .prepare(`SELECT a.outcome AS o FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.subscription_id = ?`)
        .all(subHanging.id) as Array<{ o: string | null }>;
      assert.deepEqual(outcomes.map((x) => x.o), Array(budget).fill('interrupted'));
      const due = after.prepare(`SELECT COUNT(*) AS n FROM webhook_deliveries WHERE subscription_id = ? AND status = 'pending' AND next_attempt_ms IS NOT NULL`).get(subHanging.id) as { n: number };
      assert.equal(due.n, meals, 'every delivery to the hanging receiver is due again');
    } finally {
      after.close();
    }
  } finally {
    await t.stop();
    for (const r of receivers) await r.close();
  }
});

test('a process that dies after a batched claim was committed still delivers every claimed delivery, once', async () => {
  let answer = false;
  const receivers = await Promise.all([0, 1, 2].map(() => startReceiver(() => (answer ? { status: 200 } : { hang: true }))));
  const crashedDir = mkdtempSync(join(tmpdir(), 'chyme-batch-crash-'));
  dirs.push(crashedDir);
  const crashedDb = join(crashedDir, 'chyme.db');
  try {
    // First life: two events to three subscriptions, claimed in the one turn that resumes the loop.
    const first = await startTestService();
    try {
      for (const r of receivers) await createSubscription(first, { url: r.url, events: ['meal.created'] });
      await first.service.webhooks.dispatcher.pause();
      for (let i = 0; i < 2; i++) assert.equal((await first.request('POST', '/v1/nutrition/meals', { body: { ...MEAL, description: `meal ${i}` } })).status, 201);
      first.service.webhooks.dispatcher.resume();
      for (const r of receivers) await r.waitFor(2);
      // What a crash right now leaves on disk: the committed claims and nothing after them (the
      // requests left, or not; no outcome is recorded either way).
      const reader = openDatabase(first.dbPath, { readonly: true });
      try {
        reader.prepare('VACUUM INTO ?').run(crashedDb);
      } finally {
        reader.close();
      }
    } finally {
      await first.stop();
    }
    const snapshot = openDatabase(crashedDb, { readonly: true });
    try {
      const attempts = snapshot.prepare('SELECT outcome, started_ms FROM webhook_attempts').all() as Array<{ outcome: string | null; started_ms: number }>;
      assert.equal(attempts.length, 6, 'all six deliveries were claimed before any request left');
      assert.ok(attempts.every((a) => a.outcome === null));
    } finally {
      snapshot.close();
    }

    // Second life on what the crash left: every claimed delivery is retried and succeeds, once.
    answer = true;
    const second = await startTestService({ dir: crashedDir, now: TEST_NOW + 5000 });
    try {
      for (const r of receivers) await r.waitFor(4);
      await second.service.webhooks.dispatcher.idle();
      const rows = second.service.app.db
        .prepare(
          `SELECT d.id, d.status, (SELECT group_concat(a.outcome, ',') FROM webhook_attempts a WHERE a.delivery_id = d.id ORDER BY a.attempt) AS outcomes
             FROM webhook_deliveries d`,
        )
        .all() as Array<{ id: string; status: string; outcomes: string }>;
      assert.equal(rows.length, 6);
      for (const r of rows) assert.deepEqual([r.status, r.outcomes], ['succeeded', 'interrupted,succeeded']);
      await sleep(100);
      for (const r of receivers) {
        const ids = r.received.map((x) => x.json.webhook_delivery_id as string);
        assert.equal(ids.length, 4, 'the hung first sends and one resend each, nothing more');
        assert.deepEqual(ids.slice(2).sort(), ids.slice(0, 2).sort(), 'the resends carry the same delivery ids');
      }
    } finally {
      await second.stop();
    }
  } finally {
    for (const r of receivers) await r.close();
  }
});

test('the outbox body is exactly the event envelope, serialised once for all deliveries', () => {
  const event = {
    id: 'evt_123',
    type: 'meal.updated',
    createdMs: Date.UTC(2026, 10, 22, 12, 0, 0, 789),
    data: { object: { id: 'meal_1', description: 'Crêpes "au sucre" \u2028 ✓', macros: { calories: 420, fat_g: null } }, previous_attributes: { description: 'x' } },
  };
  const body = deliveryBodies(event);
  for (const id of ['whdel_a', 'whdel_"quoted"']) assert.equal(body(id), JSON.stringify(eventEnvelope(event, id)));
});
