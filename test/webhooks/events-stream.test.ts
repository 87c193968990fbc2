import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { errorOf, startTestService, type TestService } from '../helpers/service.js';
import { createSubscription, MEAL, sleep, startReceiver } from './helpers.js';

interface SseMessage {
  id?: string;
  event: string;
  data: any;
}

/** Reads an SSE response with fetch streaming, as the renderer does. */
class SseClient {
  readonly messages: SseMessage[] = [];
  comments = 0;
  ended = false;
  private constructor(
    readonly status: number,
    readonly headers: Headers,
    private readonly controller: AbortController,
  ) {}

  static async open(t: TestService, key: string, headers: Record<string, string> = {}, query = ''): Promise<SseClient> {
    const controller = new AbortController();
    const res = await fetch(`${t.baseUrl}/v1/events/stream${query}`, {
      headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream', ...headers },
      signal: controller.signal,
    });
    const client = new SseClient(res.status, res.headers, controller);
    if (res.status === 200) void client.pump(res.body!);
    else await res.body?.cancel();
    return client;
  }

  private async pump(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let buf = '';
    try {
      for await (const chunk of body as any as AsyncIterable<Uint8Array>) {
        buf += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, end);
          buf = buf.slice(end + 2);
          const msg: Partial<SseMessage> & { data?: string } = {};
          const data: string[] = [];
          let onlyComments = true;
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) {
              if (line.startsWith(': keep-alive')) this.comments++;
              continue;
            }
            onlyComments = false;
            const colon = line.indexOf(':');
            const field = line.slice(0, colon);
            const value = line.slice(colon + 1).replace(/^ /, '');
            if (field === 'id') msg.id = value;
            else if (field === 'event') msg.event = value;
            else if (field === 'data') data.push(value);
          }
          if (!onlyComments && data.length) this.messages.push({ id: msg.id, event: msg.event ?? 'message', data: JSON.parse(data.join('\n')) } as SseMessage);
        }
      }
    } catch {
      // aborted
    }
    this.ended = true;
  }

  async waitFor(pred: (m: SseMessage) => boolean, timeoutMs = 20_000): Promise<SseMessage> {
    const start = Date.now();
    for (;;) {
      const m = this.messages.find(pred);
      if (m) return m;
      if (Date.now() - start > timeoutMs) throw new Error(`no matching SSE message; got ${JSON.stringify(this.messages.map((x) => x.event))}`);
      await sleep(10);
    }
  }

  close(): void {
    this.controller.abort();
  }
}

describe('GET /v1/events/stream', () => {
  let t: TestService;
  const clients: SseClient[] = [];
  const open = async (key: string, headers: Record<string, string> = {}, query = '') => {
    const c = await SseClient.open(t, key, headers, query);
    clients.push(c);
    return c;
  };
  before(async () => {
    t = await startTestService({ webhooks: { heartbeatMs: 200 } });
  });
  after(async () => {
    for (const c of clients) c.close();
    await t.stop();
  });

  test('a created meal appears live as event/id/data with the event envelope', async () => {
    const c = await open(t.keyWith('nutrition:read'));
    assert.equal(c.status, 200);
    assert.match(String(c.headers.get('content-type')), /^text\/event-stream/);
    assert.equal(c.headers.get('cache-control'), 'no-store');
    const meal = (await t.request('POST', '/v1/nutrition/meals', { body: MEAL })).body;
    const m = await c.waitFor((x) => x.event === 'meal.created');
    assert.match(m.id!, /^\d+$/);
    assert.equal(m.data.object, 'event');
    assert.equal(m.data.type, 'meal.created');
    assert.match(m.data.id, /^evt_/);
    assert.deepEqual(m.data.data.object, meal);
    assert.equal(m.data.webhook_delivery_id, undefined, 'no delivery id on the stream');
  });

  test('scopes: meal.* needs nutrition:read, digestion events need digestion:read; test.ping is never streamed', async () => {
    const nutrition = await open(t.keyWith('nutrition:read'));
    const digestion = await open(t.keyWith('digestion:read'));
    const hooks = await open(t.keyWith('webhooks:read'));
    await t.request('POST', '/v1/nutrition/meals', { body: { ...MEAL, description: 'scoped' } });
    t.service.app.bus.write((emit) => {
      emit('digestion.state_changed', { object: 'digestion.state', state: 'processing', marker: 'x' }, { previousAttributes: { state: 'fasted' } });
      emit('test.ping', { object: 'webhook_ping' });
    });
    t.service.app.bus.write((emit) => emit('windows.updated', { object: 'digestion.windows', sleep_ready_at: '2026-11-22T21:00:00Z', marker: 'x' }));
    await digestion.waitFor((m) => m.event === 'windows.updated' && m.data.data.object.marker === 'x');
    await nutrition.waitFor((m) => m.data.data?.object?.description === 'scoped');
    await sleep(100);
    const digestionTypes = new Set(['gut_score.created', 'overnight_score.created', 'digestion.state_changed', 'windows.updated']);
    assert.ok(nutrition.messages.every((m) => m.event.startsWith('meal.')), JSON.stringify(nutrition.messages.map((m) => m.event)));
    assert.ok(digestion.messages.every((m) => digestionTypes.has(m.event)), JSON.stringify(digestion.messages.map((m) => m.event)));
    const mine = digestion.messages.filter((m) => m.data.data.object.marker === 'x');
    assert.deepEqual(mine.map((m) => m.event), ['digestion.state_changed', 'windows.updated']);
    assert.deepEqual(mine[0]!.data.data.previous_attributes, { state: 'fasted' });
    assert.equal(hooks.messages.filter((m) => !m.event.startsWith('webhook_')).length, 0, 'webhooks:read sees no meal or digestion data');
    for (const c of [nutrition, digestion, hooks]) assert.ok(c.messages.every((m) => m.event !== 'test.ping'));
  });

  test('webhooks:read holders get live delivery and disable notices (without ids)', async () => {
    const rx = await startReceiver();
    try {
      const hooks = await open(t.keyWith('webhooks:read'));
      const sub = await createSubscription(t, { url: rx.url, events: ['meal.created'] });
      await t.request('POST', `/v1/webhooks/${sub.id}/test`);
      const notice = await hooks.waitFor((m) => m.event === 'webhook_delivery.updated');
      assert.equal(notice.id, undefined, 'notices carry no id: Last-Event-ID stays an event sequence');
      assert.equal(notice.data.type, 'webhook_delivery.updated');
      assert.equal(notice.data.data.object.subscription_id, sub.id);
      assert.equal(notice.data.data.object.status, 'succeeded');
      await t.request('DELETE', `/v1/webhooks/${sub.id}`);
    } finally {
      await rx.close();
    }
  });

  test('Last-Event-ID resumes after the last event seen, in order, then continues live', async () => {
    const key = t.keyWith('nutrition:read');
    const first = await open(key);
    const ids: string[] = [];
    for (const d of ['r1', 'r2', 'r3']) {
      const meal = (await t.request('POST', '/v1/nutrition/meals', { body: { ...MEAL, description: d } })).body;
      ids.push(meal.id);
    }
    const seen = await first.waitFor((m) => m.data.data?.object?.id === ids[0]);
    first.close();

    const resumed = await open(key, { 'last-event-id': seen.id! });
    await resumed.waitFor((m) => m.data.data?.object?.id === ids[2]);
    const replayed = resumed.messages.map((m) => m.data.data.object.description);
    assert.deepEqual(replayed, ['r2', 'r3']);
    const seqs = resumed.messages.map((m) => Number(m.id));
    assert.deepEqual([...seqs].sort((a, b) => a - b), seqs, 'in order');
    assert.ok(seqs[0]! > Number(seen.id));

    await t.request('POST', '/v1/nutrition/meals', { body: { ...MEAL, description: 'r4' } });
    await resumed.waitFor((m) => m.data.data?.object?.description === 'r4');
    assert.equal(resumed.messages.filter((m) => m.data.data.object.description === 'r3').length, 1, 'no duplicates');

    const byQuery = await open(key, {}, `?last_event_id=${seen.id}`);
    await byQuery.waitFor((m) => m.data.data?.object?.description === 'r4');
    assert.deepEqual(byQuery.messages.map((m) => m.data.data.object.description), ['r2', 'r3', 'r4']);

    const byEventId = await open(key, { 'last-event-id': seen.data.id });
    await byEventId.waitFor((m) => m.data.data?.object?.description === 'r4');
    assert.equal(byEventId.messages[0]!.data.data.object.description, 'r2', 'an evt_ id works as a resume point too');
  });

  test('a restore tells every open stream (database.restored, any key), which then carries the restored data\'s events', async () => {
    await t.request('POST', '/v1/nutrition/meals', { body: MEAL });
    const backup = await t.request('POST', '/v1/backups');
    assert.equal(backup.status, 201, backup.text);
    // Events after the backup: the stream's position runs past the backup's newest event.
    for (let i = 0; i < 3; i++) await t.request('POST', '/v1/nutrition/meals', { body: { ...MEAL, description: `later ${i}` } });
    const reader = await open(t.keyWith('nutrition:read'));
    const sleepOnly = await open(t.keyWith('sleep:read'));
    await t.request('POST', '/v1/nutrition/meals', { body: { ...MEAL, description: 'seen live' } });
    const before = await reader.waitFor((m) => m.event === 'meal.created' && m.data.data.object.description === 'seen live');

    const r = await t.request('POST', `/v1/backups/${backup.body.id}/restore`);
    assert.equal(r.status, 200, r.text);
    for (const c of [reader, sleepOnly]) {
      const notice = await c.waitFor((m) => m.event === 'database.restored');
      assert.equal(notice.data.object, 'notice');
      assert.equal(notice.data.type, 'database.restored');
      // Its id is the restored file's newest event: a client resuming from it misses nothing.
      assert.ok(Number(notice.id) < Number(before.id), `${notice.id} < ${before.id}`);
    }
    // A meal logged now has a sequence number below what the stream had seen before the restore:
    // it is still delivered.
    await t.request('POST', '/v1/nutrition/meals', { body: { ...MEAL, description: 'after the restore' } });
    const after = await reader.waitFor((m) => m.event === 'meal.created' && m.data.data.object.description === 'after the restore');
    assert.ok(Number(after.id) <= Number(before.id));
  });

  test('heartbeats keep the line alive', async () => {
    const c = await open(t.keyWith('digestion:read'));
    await sleep(650);
    assert.ok(c.comments >= 2, `heartbeats: ${c.comments}`);
  });

  test('errors: no key 401, no read scope 403, bad Last-Event-ID 400', async () => {
    const res = await fetch(`${t.baseUrl}/v1/events/stream`);
    assert.equal(res.status, 401);
    const forbidden = await t.request('GET', '/v1/events/stream', { key: t.keyWith('webhooks:write', 'nutrition:write') });
    assert.equal(forbidden.status, 403);
    assert.equal(errorOf(forbidden).code, 'insufficient_scope');
    assert.match(errorOf(forbidden).message, /nutrition:read/);
    const bad = await t.request('GET', '/v1/events/stream', { key: t.keyWith('nutrition:read'), headers: { 'last-event-id': 'yesterday' } });
    assert.equal(bad.status, 400);
    assert.equal(errorOf(bad).param, 'Last-Event-ID');
  });

  test('a revoked key loses its stream; stopping the service ends every stream', async () => {
    const created = await t.request('POST', '/v1/api_keys', { body: { name: 'sse', scopes: ['nutrition:read'] } });
    const c = await open(created.body.secret);
    await t.request('DELETE', `/v1/api_keys/${created.body.id}`);
    const start = Date.now();
    while (!c.ended && Date.now() - start < 15_000) await sleep(20);
    assert.ok(c.ended, 'the stream ended after the key was revoked');

    const t2 = await startTestService();
    const c2 = await SseClient.open(t2, t2.keyWith('nutrition:read'));
    // An open stream would hold server.close() for as long as the client stays connected: here,
    // for ever. The bound only ends the wait for that failure.
    const stopped = await Promise.race([t2.stop().then(() => true), sleep(15_000).then(() => false)]);
    assert.ok(stopped, 'stop() is not held up by an open stream');
    const s = Date.now();
    while (!c2.ended && Date.now() - s < 15_000) await sleep(20);
    assert.ok(c2.ended);
  });
});
