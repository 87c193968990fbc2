import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, relative, sep } from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as Automerge from '@automerge/automerge';
import { runCli } from '../helpers/cli.js';
import { converged, pair, startDevice, startRelay, until, type Device, type RelayProcess } from '../helpers/sync.js';
import { startReceiver, type Receiver } from '../webhooks/helpers.js';

/**
 * Issue 22 / SYNC.md §6 and §8 case 5, "secrets stay per device": after a run with webhooks, API
 * keys and an MQTT password on A, nothing of them is in the relay's storage or anywhere in B's
 * files (its database, WAL, and sync storage). The documents are Automerge binaries whose large
 * columns are DEFLATE-compressed, so the scanner also decodes every document's whole history
 * (every change's operations, overwritten values included) and searches that text; it is shown to
 * work by finding the secrets in A's own database and a meal's description in the relay's documents.
 */

const iso = (ms: number) => new Date(ms).toISOString();

function filesUnder(path: string): string[] {
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path).flatMap((e) => filesUnder(join(path, e)));
}

/** The text of every change of every Automerge document stored under `dir` (NodeFS layout: xx/rest/kind/hash). */
function decodedDocuments(dir: string): Map<string, string> {
  const byDoc = new Map<string, string[]>();
  for (const f of filesUnder(dir)) {
    const parts = relative(dir, f).split(sep);
    const kind = parts.at(-2);
    if (kind !== 'snapshot' && kind !== 'incremental') continue;
    const doc = parts.slice(0, -2).join(sep);
    byDoc.set(doc, [...(byDoc.get(doc) ?? []), f]);
  }
  const out = new Map<string, string>();
  for (const [doc, files] of byDoc) {
    let d = Automerge.init<unknown>();
    for (const f of files) d = Automerge.loadIncremental(d, new Uint8Array(readFileSync(f)));
    const changes = Automerge.getAllChanges(d).map((c) => Automerge.decodeChange(c));
    out.set(join(dir, doc), JSON.stringify({ state: d, changes }));
  }
  return out;
}

/** Where each needle occurs: in a file's bytes, or in a decoded document's history. */
function scan(paths: string[], needles: string[], decodeUnder: string[] = []): string[] {
  const hits: string[] = [];
  for (const f of paths.flatMap(filesUnder)) {
    const bytes = readFileSync(f);
    for (const n of needles) if (bytes.includes(Buffer.from(n, 'utf8'))) hits.push(`${n} in ${f}`);
  }
  for (const dir of decodeUnder) {
    for (const [doc, text] of decodedDocuments(dir)) for (const n of needles) if (text.includes(n)) hits.push(`${n} in the history of ${doc}`);
  }
  return hits;
}

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

  test('the scanner finds what A keeps: its webhook secrets, MQTT password and key prefixes are in its own files', () => {
    const aFiles = readdirSync(dir).filter((f) => f.startsWith(basename(a.dbPath)) && !f.endsWith('.sync')).map((f) => join(dir, f));
    const hits = scan(aFiles, [secrets.whsecGenerated!, secrets.customWebhook!, secrets.mqttPassword!, secrets.keyA2!.slice(0, 10)]);
    for (const n of [secrets.whsecGenerated!, secrets.customWebhook!, secrets.mqttPassword!, secrets.keyA2!.slice(0, 10)]) {
      assert.ok(hits.some((h) => h.startsWith(`${n} in `)), `${n} not found in A's database: the scanner does not work`);
    }
  });

  test('the scanner reads the documents: the meal description is in the relay\'s and in B\'s sync storage', () => {
    const relayDocs = join(relay.dataDir, 'documents');
    assert.ok(scan([], [marker], [relayDocs]).length > 0, 'the relay\'s documents do not decode to the meal that was synced');
    assert.ok(scan([], [`${marker} edited`], [`${b.dbPath}.sync`]).length > 0, 'B\'s sync storage does not decode to its own meal');
    assert.ok(existsSync(`${b.dbPath}.sync`) && filesUnder(`${b.dbPath}.sync`).length > 0);
  });

  test('no secret of A is in the relay\'s data folder', () => {
    const needles = [...aNeedles(), 'chy_'];
    assert.deepEqual(scan([relay.dataDir], needles, [join(relay.dataDir, 'documents')]), []);
  });

  test('no secret of A is in B\'s database, WAL or sync storage', () => {
    const files = bFiles();
    assert.ok(files.some((f) => f.endsWith('.db')) && files.some((f) => f.endsWith('.db.sync')), files.join(', '));
    assert.deepEqual(scan(files, aNeedles(), [`${b.dbPath}.sync`]), []);
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

