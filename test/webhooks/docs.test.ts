/**
 * The 15-line receiver in docs/webhooks.md, extracted and run as written (it imports the built
 * `chyme/webhooks/verify` through the package's own exports), against a real service.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { ManualClock } from '../../server/clock.js';
import { signatureHeader } from '../../server/webhooks/sign.js';
import { freePort } from '../helpers/ports.js';
import { startTestService } from '../helpers/service.js';
import { MEAL, sleep } from './helpers.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

class RealClock extends ManualClock {
  override now(): number {
    return Date.now();
  }
}

function snippet(): string {
  const doc = readFileSync(join(ROOT, 'docs/webhooks.md'), 'utf8');
  const m = /<!-- receiver-snippet[^>]*-->\s*```js\n([\s\S]*?)```/.exec(doc);
  assert.ok(m, 'docs/webhooks.md has the receiver snippet');
  return m[1]!;
}


test('the documented receiver is at most 15 lines', () => {
  const lines = snippet().trimEnd().split('\n');
  assert.ok(lines.length <= 15, `${lines.length} lines`);
});

test('the documented 15-line receiver verifies, deduplicates and acknowledges real deliveries', { timeout: 30_000 }, async (t) => {
  const built = join(ROOT, 'build/server/webhooks/verify.js');
  assert.ok(
    existsSync(built) && statSync(built).mtimeMs >= statSync(join(ROOT, 'server/webhooks/verify.ts')).mtimeMs,
    'build/server/webhooks/verify.js is missing or stale: run `npm run build:server`',
  );
  // Inside the package, so `chyme/webhooks/verify` resolves through package.json "exports".
  const file = join(ROOT, 'build', `docs-receiver-${process.pid}.mjs`);
  writeFileSync(file, snippet());
  t.after(() => rmSync(file, { force: true }));

  const secret = 'whsec_docs_receiver_0123456789';
  const port = await freePort();
  const child = spawn(process.execPath, [file], { env: { ...process.env, PORT: String(port), CHYME_WEBHOOK_SECRET: secret }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
  t.after(() => {
    child.kill();
  });
  const url = `http://127.0.0.1:${port}/`;
  for (let i = 0; ; i++) {
    try {
      await fetch(url, { method: 'POST', body: '{}' });
      break;
    } catch {
      if (i > 200) assert.fail(`the receiver did not start:\n${out}`);
      await sleep(25);
    }
  }

  // A forged delivery is refused.
  const forged = await fetch(url, { method: 'POST', body: '{"type":"meal.created"}', headers: { 'x-service-signature': signatureHeader('{"type":"x"}', [secret], Math.floor(Date.now() / 1000)) } });
  assert.equal(forged.status, 400);
  const unsigned = await fetch(url, { method: 'POST', body: '{}' });
  assert.equal(unsigned.status, 400);

  // Real deliveries from a running service (real clock: the receiver checks the timestamp).
  const svc = await startTestService({ clock: new RealClock(0) });
  t.after(() => svc.stop());
  const sub = await svc.request('POST', '/v1/webhooks', { body: { url, events: ['meal.created'], secret } });
  assert.equal(sub.status, 201);
  const ping = await svc.request('POST', `/v1/webhooks/${sub.body.id}/test`);
  assert.equal(ping.body.delivered, true);
  assert.equal(ping.body.status_code, 204);
  const meal = await svc.request('POST', '/v1/nutrition/meals', { body: { ...MEAL, timestamp: new Date().toISOString() } });
  assert.equal(meal.status, 201);
  for (let i = 0; i < 200 && !out.includes(meal.body.id); i++) await sleep(20);
  assert.match(out, new RegExp(`^meal\\.created ${meal.body.id}$`, 'm'));
  assert.match(out, /^test\.ping $/m);

  // A redelivery has a new delivery id and is processed; a replay of the same delivery is not.
  const log = (await svc.request('GET', `/v1/webhooks/${sub.body.id}/deliveries?status=succeeded`)).body.data;
  const delivery = log.find((d: any) => d.event_type === 'meal.created');
  assert.ok(delivery);
  await svc.request('POST', `/v1/webhooks/${sub.body.id}/deliveries/${delivery.id}/redeliver`);
  for (let i = 0; i < 200 && out.split(meal.body.id).length < 3; i++) await sleep(20);
  assert.equal(out.split('\n').filter((l) => l === `meal.created ${meal.body.id}`).length, 2);

  const replay = JSON.stringify({ object: 'event', id: 'evt_r', type: 'meal.created', created: '', webhook_delivery_id: 'whdel_replayed', data: { object: { id: 'meal_replayed' } } });
  for (let i = 0; i < 2; i++) {
    const res = await fetch(url, { method: 'POST', body: replay, headers: { 'x-service-signature': signatureHeader(replay, [secret], Math.floor(Date.now() / 1000)) } });
    assert.equal(res.status, 204);
  }
  await sleep(100);
  assert.equal(out.split('\n').filter((l) => l === 'meal.created meal_replayed').length, 1, 'the same delivery twice is handled once');
});
