import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runCli } from '../helpers/cli.js';
import { converged, pair, startDevice, startRelay, until, type Device, type RelayProcess } from '../helpers/sync.js';
import { startReceiver, type Receiver } from '../webhooks/helpers.js';
import { blobs, describeHits, scanBytes, scanFolder, withDb } from './scan.js';

/**
 * Issue 22 / SYNC.md §6 and §8 case 5, "secrets stay per device", with the sealed relay of issue 27:
 * after a run with webhooks, API keys and an MQTT password on A, nothing of them is in the relay's
 * folder (relay.db: sealed chunks) nor anywhere in B's files (its database and WAL, where its copies
 * of the documents are, in sync_docs). The scanner (scan.ts) looks for each secret in every encoding
 * and compressed stream it knows, and in the decoded history of every document B holds; it is shown
 * to work by finding the secrets in A's own database and a meal's description in B's documents.
 *
 * The history secret itself is not device-local: every device of the history keeps it, in its
 * sync_config row (base32), since every key of the history is derived from it. The relay never has it.
 */

const iso = (ms: number) => new Date(ms).toISOString();

describe('sync: secrets stay on their device', () => {
  let dir: string;
  let relay: RelayProcess;
  let a: Device;
  let b: Device;
  let receiver: Receiver;
  const secrets: Record<string, string> = {};
  let aKeyIds: string[] = [];
  const marker = `meal-marker-${process.pid}-${Date.now()}`;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'chyme-sync-secrets-'));
    relay = await startRelay(join(dir, 'relay'));
    receiver = await startReceiver();
    [a, b] = await Promise.all([startDevice(dir, 'desk'), startDevice(dir, 'laptop')]);
    // A second key on A, made by the command line while A is served (its secret is printed once).
    const made = runCli(['keys', 'create', '--name', 'desk extra', '--scopes', 'all', '--db', a.dbPath]);
    assert.equal(made.status, 0, made.stderr);
    secrets.keyA1 = a.key;
    secrets.keyA2 = made.stdout.trim().split('\n').at(-1)!;
    for (const k of [secrets.keyA1, secrets.keyA2]) assert.match(k, /^chy_[A-Za-z0-9]{40}$/);

    await pair(relay, a, b);
    const generated = await a.api('POST', '/v1/webhooks', { url: `${receiver.url}?s=generated`, events: ['meal.created', 'meal.updated', 'meal.deleted'] });
    assert.equal(generated.status, 201, JSON.stringify(generated.json));
    secrets.whsecGenerated = generated.json.secret;
    assert.match(String(secrets.whsecGenerated), /^whsec_/);
    secrets.customWebhook = `custom-hook-secret-${createHash('sha256').update(marker).digest('hex').slice(0, 24)}`;
    const custom = await a.api('POST', '/v1/webhooks', { url: `${receiver.url}?s=custom`, events: ['meal.created'], secret: secrets.customWebhook });
    assert.equal(custom.status, 201, JSON.stringify(custom.json));
    secrets.mqttPassword = `mqtt-password-${createHash('sha256').update(`mqtt${marker}`).digest('hex').slice(0, 24)}`;
    const mqtt = await a.api('PATCH', '/v1/integrations/mqtt', { broker_url: 'mqtt://127.0.0.1:9', username: 'home-assistant', password: secrets.mqttPassword });
    assert.equal(mqtt.status, 200, JSON.stringify(mqtt.json));
    assert.equal(mqtt.json.has_password, true);
    aKeyIds = ((await a.api('GET', '/v1/api_keys')).json.data as Array<{ id: string }>).map((k) => k.id);

    // The run: meals on both devices, delivered through A, and the history on both.
    const now = Date.now();
    const onB = await b.api('POST', '/v1/nutrition/meals', { timestamp: iso(now - 3600_000), meal_type: 'lunch', description: marker, macros: { calories: 500 } });
    assert.equal(onB.status, 201);
    await b.api('PATCH', `/v1/nutrition/meals/${onB.json.id}`, { description: `${marker} edited` });
    await a.api('POST', '/v1/nutrition/meals', { timestamp: iso(now - 7200_000), meal_type: 'snack', description: 'desk apple', macros: { calories: 95 } });
    await a.api('PATCH', '/v1/settings', { units: 'imperial' });
    // Created and edited at once: the host may see one change (meal.created with the edit) or two.
    await receiver.waitUntil((r) => r.some((x) => x.json?.type?.startsWith('meal.') && x.json.data.object.description === `${marker} edited`));
    await converged([a, b]);
    for (const d of [a, b]) await until(`${d.name} has nothing pending`, async () => (await d.api('GET', '/v1/sync')).json.pending_changes === 0);
    // Both devices' storage written out: stopped services leave nothing in memory.
    await Promise.all([a.stop(), b.stop()]);
    await relay.kill('SIGTERM');
  });

  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await relay?.kill();
    await receiver?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const aNeedles = () => {
    const keys = [secrets.keyA1!, secrets.keyA2!];
    return [
      ...Object.values(secrets),
      // What A's database keeps of its keys: the shown prefix and the hash.
      ...keys.map((k) => k.slice(0, 'chy_'.length + 6)),
      ...keys.map((k) => createHash('sha256').update(k).digest('hex')),
      'whsec_',
    ];
  };
  const bFiles = () => readdirSync(dir).filter((f) => f.startsWith(basename(b.dbPath))).map((f) => join(dir, f));
  /** B's copies of the documents (read after its files were scanned: opening the database may add a WAL). */
  const bDocuments = () => blobs(b.dbPath, 'SELECT name AS label, bytes FROM sync_docs');

  test('the scanner finds what A keeps: its webhook secrets, MQTT password and key prefixes are in its own files', () => {
    const aFiles = readdirSync(dir).filter((f) => f.startsWith(basename(a.dbPath))).map((f) => join(dir, f));
    const needles = [secrets.whsecGenerated!, secrets.customWebhook!, secrets.mqttPassword!, secrets.keyA2!.slice(0, 10)];
    const hits = aFiles.flatMap((f) => scanFolder(f, needles, { streams: false }));
    for (const n of needles) assert.ok(hits.some((h) => h.needle === n), `${n} not found in A's database: the scanner does not work`);
  });

  test('no secret of A is in the relay\'s data folder (relay.db, every chunk in it opened as it is stored)', () => {
    const needles = [...aNeedles(), 'chy_'];
    assert.equal(describeHits(scanFolder(relay.dataDir, needles)), '');
    const chunks = blobs(join(relay.dataDir, 'relay.db'), 'SELECT seq AS label, bytes FROM chunks');
    assert.ok(chunks.length > 0);
    assert.equal(describeHits(chunks.flatMap((c) => scanBytes(c.bytes, needles, `chunk ${c.label}`))), '');
  });

  test('no secret of A is in B\'s database or WAL, nor in the history of any document B holds', () => {
    const files = bFiles();
    assert.ok(files.some((f) => f.endsWith('.db')), files.join(', '));
    // The documents are in B's database: there is no sync folder beside it any more.
    assert.ok(!existsSync(`${b.dbPath}.sync`), `${b.dbPath}.sync exists`);
    assert.equal(describeHits(files.flatMap((f) => scanFolder(f, aNeedles(), { streams: false }))), '');
    const docs = bDocuments();
    assert.ok(docs.some((d) => d.label === 'root') && docs.some((d) => d.label.startsWith('shard:meals/')), docs.map((d) => d.label).join(', '));
    assert.equal(describeHits(docs.flatMap((d) => scanBytes(d.bytes, aNeedles(), `B's document ${d.label}`))), '');
  });

  test('the scanner reads the documents: the meal description is in B\'s documents, and not in the relay\'s folder', () => {
    const inB = bDocuments().flatMap((d) => scanBytes(d.bytes, [`${marker} edited`], d.label));
    assert.ok(inB.length > 0, 'B\'s documents do not decode to its own meal');
    assert.equal(describeHits(scanFolder(relay.dataDir, [marker])), '');
  });

  test('the history secret is in each device\'s sync_config (the same on both), and nowhere in the relay\'s folder', () => {
    const secretOf = (d: Device) => withDb(d.dbPath, (db) => db.prepare('SELECT history_secret FROM sync_config').pluck().get() as string | undefined);
    const secret = secretOf(b);
    assert.match(String(secret), /^[A-Z2-7]{26}$/);
    assert.equal(secretOf(a), secret);
    assert.equal(describeHits(scanFolder(relay.dataDir, [secret!])), '');
  });

  test('B lists only its own API keys, and none of A\'s subscriptions or MQTT set-up', async () => {
    await b.restart();
    const keys = (await b.api('GET', '/v1/api_keys')).json.data as Array<{ id: string; name: string }>;
    assert.deepEqual(keys.map((k) => k.name), ['sync test']);
    assert.ok(keys.every((k) => !aKeyIds.includes(k.id)));
    // A's keys do not open B.
    const r = await fetch(`${b.url}/v1/sync`, { headers: { authorization: `Bearer ${secrets.keyA1}` } });
    assert.equal(r.status, 401);
    assert.deepEqual((await b.api('GET', '/v1/webhooks')).json.data, []);
    const mqtt = (await b.api('GET', '/v1/integrations/mqtt')).json;
    assert.equal(mqtt.has_password, false);
    assert.equal(mqtt.broker_url, null);
  });
});

