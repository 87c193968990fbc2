import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import * as Automerge from '@automerge/automerge';
import { decodePairingCode, encodePairingCode } from '../../server/sync/index.js';
import { runCliAsync } from '../helpers/cli.js';
import { converged, history, startDevice, startRelay, until, type Device, type RelayProcess } from '../helpers/sync.js';
import { blobs, describeHits, filesUnder, scanBytes, scanFolder, withDb } from './scan.js';

/**
 * Issue 27, "A relay that cannot read your history" (PHONE-PEER.md §E4, criteria 1, 2, 3, 5, 7 and 8):
 * a `chyme relay` process and `chyme serve` processes on 127.0.0.1. What the relay stores is scanned
 * for the history's text in every encoding the scanner knows (scan.ts), and the scanner is shown to
 * find the same text where it is readable: in a device's own database.
 */

const HOUR = 3600_000;

/** A TCP proxy on 127.0.0.1 to a local relay that counts the bytes flowing back from it. */
async function countingProxy(relayUrl: string): Promise<{ url: string; downstream(): number; close(): void }> {
  const target = new URL(relayUrl);
  let down = 0;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(Number(target.port), '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined).on('close', () => sockets.delete(s));
    }
    upstream.on('data', (chunk: Buffer) => (down += chunk.length));
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const url = new URL(relayUrl);
  url.port = String(port);
  return {
    url: url.href.replace(/\/$/, ''),
    downstream: () => down,
    close() {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}
const iso = (ms: number) => new Date(ms).toISOString();

/** One line that is one sentence (it may begin with a path), after the command line's "chyme: ". */
function assertOneSentence(text: string, about: RegExp): void {
  const line = text.replace(/^chyme: /, '').trimEnd();
  assert.ok(!line.includes('\n'), `more than one line: ${JSON.stringify(text)}`);
  assert.match(line, /^[A-Z/].*[.!?]$/, `not a sentence: ${JSON.stringify(line)}`);
  assert.doesNotMatch(line, /[.!?]\s+[A-Z]/, `more than one sentence: ${JSON.stringify(line)}`);
  assert.match(line, about);
}

test('the scanner finds text as UTF-8, UTF-16LE, base64 at any alignment, in zlib, gzip and raw DEFLATE streams at any offset, and in an Automerge history', () => {
  const needle = `scanner-self-test-${randomBytes(6).toString('hex')}`;
  const text = Buffer.from(`${'filler '.repeat(60)}${needle}${' more filler'.repeat(40)}`);
  const noise = (n: number) => randomBytes(n);
  const cases: Array<[string, Buffer, RegExp]> = [
    ['utf-8', Buffer.concat([noise(33), Buffer.from(needle), noise(9)]), /^utf-8$/],
    ['utf-16le', Buffer.concat([noise(33), Buffer.from(needle, 'utf16le'), noise(9)]), /^utf-16le$/],
    ...[0, 1, 2].map((shift): [string, Buffer, RegExp] => [`base64 after ${shift} bytes`, Buffer.concat([noise(5), Buffer.from(Buffer.concat([noise(shift), Buffer.from(needle), noise(4)]).toString('base64')), noise(5)]), /^base64 /]),
    ['base64url', Buffer.concat([noise(5), Buffer.from(Buffer.concat([Buffer.from([0xfb, 0xff]), Buffer.from(`${needle}??>>`)]).toString('base64url')), noise(5)]), /^base64/],
    ['raw deflate', Buffer.concat([noise(1001), deflateRawSync(text), noise(77)]), /in a raw deflate stream at offset 1001$/],
    ['zlib', Buffer.concat([noise(13), deflateSync(text), noise(77)]), /in a (zlib|raw deflate) stream at offset 1[35]$/],
    ['gzip', Buffer.concat([noise(7), gzipSync(text), noise(7)]), /in a gzip stream at offset 7$/],
    // A member with a file name (gzip's FNAME) before its data.
    ['gzip with a name', Buffer.concat([noise(7), Buffer.from([0x1f, 0x8b, 8, 8, 0, 0, 0, 0, 0, 3]), Buffer.from('notes.txt\0'), deflateRawSync(text), noise(8)]), /in a gzip stream at offset 7$/],
  ];
  for (const [what, bytes, how] of cases) {
    const hits = scanBytes(bytes, [needle], what);
    assert.ok(hits.some((h) => how.test(h.how)), `${what}: ${describeHits(hits) || 'not found'}`);
  }
  // Large text columns of an Automerge document are DEFLATE-compressed: found either way.
  const doc = Automerge.change(Automerge.init<{ notes: string[] }>(), (d) => {
    d.notes = [];
    for (let i = 0; i < 50; i++) d.notes.push(`${needle} ${i}`);
  });
  assert.ok(scanBytes(Automerge.save(doc), [needle], 'doc').some((h) => h.how === 'in the Automerge history'));
  // And random bytes hold nothing.
  assert.deepEqual(scanBytes(noise(64 * 1024), [needle], 'noise'), []);
});

describe('sync: the sealed relay stores nothing it can read', () => {
  let dir: string;
  let relay: RelayProcess;
  let a: Device;
  let b: Device;
  let code: string;
  const tag = randomBytes(6).toString('hex');
  const M = {
    meal: `mealdesc-${tag}`,
    mealFood: `mealfood-${tag}`,
    food: `foodname-${tag}`,
    saved: `savedmeal-${tag}`,
    savedFood: `savedfood-${tag}`,
    deviceA: `desk-of-${tag}`,
    deviceB: `laptop-of-${tag}`,
    zoneA: 'America/Argentina/Ushuaia',
    zoneB: 'Pacific/Chatham',
  };
  const mealIds: string[] = [];
  let foodId: string;
  let savedId: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'chyme-sync-sealed-'));
    relay = await startRelay(join(dir, 'relay'));
    [a, b] = await Promise.all([startDevice(dir, 'desk'), startDevice(dir, 'laptop')]);
    // The history before pairing: meals in three months (three documents), a custom food, a saved meal, a time zone.
    assert.equal((await a.api('PATCH', '/v1/settings', { timezone: M.zoneA })).status, 200);
    for (const month of [1, 2, 3]) {
      const r = await a.api('POST', '/v1/nutrition/meals', {
        timestamp: iso(Date.UTC(2025, month, 14, 12)),
        meal_type: 'lunch',
        description: `${M.meal} month ${month}`,
        foods: [{ name: `${M.mealFood} ${month}`, calories: 300 + month }],
      });
      assert.equal(r.status, 201, JSON.stringify(r.json));
      mealIds.push(r.json.id);
    }
    const food = await a.api('POST', '/v1/foods', { name: M.food, nutrients: { calories: 450, protein_g: 10, carbs_g: 60, fat_g: 18 } });
    assert.equal(food.status, 201, JSON.stringify(food.json));
    foodId = food.json.id;
    const saved = await a.api('POST', '/v1/nutrition/saved_meals', { name: M.saved, meal_type: 'breakfast', foods: [{ name: M.savedFood, calories: 180 }] });
    assert.equal(saved.status, 201, JSON.stringify(saved.json));
    savedId = saved.json.id;
    const setup = await a.api('POST', '/v1/sync/setup', { relay: relay.url, token: relay.token, name: M.deviceA });
    assert.equal(setup.status, 201, JSON.stringify(setup.json));
    code = (await a.api('GET', '/v1/sync/pairing-code')).json.pairing_code;
  });

  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await relay?.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  test('a pairing code whose secret has one bit flipped is refused with one sentence, by the API and the command line, and nothing is written', async () => {
    const decoded = decodePairingCode(code);
    const secret = decoded.secret.slice();
    secret[7]! ^= 0x10;
    const wrong = encodePairingCode({ relay: decoded.relay, secret });
    assert.notEqual(wrong, code);

    const r = await b.api('POST', '/v1/sync/join', { pairing_code: wrong, name: M.deviceB });
    assert.ok(r.status >= 400, JSON.stringify(r.json));
    assertOneSentence(r.json.error.message, /key does not match/);
    assert.equal(((await history(b)) as { meals: unknown[] }).meals.length, 0);
    assert.equal((await b.api('GET', '/v1/sync')).json.enabled, false);
    withDb(b.dbPath, (db) => {
      assert.equal(db.prepare('SELECT COUNT(*) FROM meals').pluck().get(), 0);
      assert.equal(db.prepare('SELECT COUNT(*) FROM sync_config').pluck().get(), 0);
    });

    const cliDb = join(dir, 'cli-join.db');
    const cli = await runCliAsync(['sync', 'join', wrong, '--db', cliDb]);
    assert.notEqual(cli.status, 0, cli.stdout + cli.stderr);
    assertOneSentence(cli.stderr, /key does not match/);
    withDb(cliDb, (db) => {
      assert.equal(db.prepare('SELECT COUNT(*) FROM meals').pluck().get(), 0);
      assert.equal(db.prepare('SELECT COUNT(*) FROM sync_config').pluck().get(), 0);
    });
  });

  test('GET /v1/sync and chyme sync status --json say the history is encrypted', async () => {
    const joined = await b.api('POST', '/v1/sync/join', { pairing_code: code, name: M.deviceB });
    assert.equal(joined.status, 200, JSON.stringify(joined.json));
    assert.equal(joined.json.encrypted, true);
    for (const d of [a, b]) assert.equal((await d.api('GET', '/v1/sync')).json.encrypted, true, d.name);
    const cli = await runCliAsync(['sync', 'status', '--json', '--db', a.dbPath]);
    assert.equal(cli.status, 0, cli.stderr);
    assert.equal(JSON.parse(cli.stdout).encrypted, true);
    assert.equal(JSON.parse(cli.stdout).enabled, true);
  });

  test('after 200 edits on both devices, no text of the history is in the relay\'s folder, and no stored blob is an Automerge document', { timeout: 600_000 }, async () => {
    await converged([a, b]);
    // 100 edits on each device at the same time: meals, the food, the saved meal, the time zone.
    const edits = (d: Device, side: string) => async () => {
      for (let i = 0; i < 100; i++) {
        let r;
        if (i === 50) r = await d.api('PATCH', '/v1/settings', { timezone: side === 'a' ? M.zoneA : M.zoneB });
        else if (i % 4 === 1) r = await d.api('PATCH', `/v1/foods/${foodId}`, { name: `${M.food} ${side}${i}` });
        else if (i % 4 === 2) r = await d.api('PATCH', `/v1/nutrition/saved_meals/${savedId}`, { name: `${M.saved} ${side}${i}` });
        else r = await d.api('PATCH', `/v1/nutrition/meals/${mealIds[i % 3]}`, { description: `${M.meal} ${side}${i}` });
        assert.equal(r.status, 200, JSON.stringify(r.json));
      }
    };
    await Promise.all([edits(a, 'a')(), edits(b, 'b')()]);
    // Both zones were in the history; the last one set is either.
    assert.equal((await b.api('PATCH', '/v1/settings', { timezone: M.zoneB })).status, 200);
    await converged([a, b], 120_000);
    for (const d of [a, b]) await until(`${d.name} has nothing pending`, async () => (await d.api('GET', '/v1/sync')).json.pending_changes === 0, 60_000);
    // Stopped, so that everything is written out of memory and the WAL files are folded in.
    await Promise.all([a.stop(), b.stop()]);
    await relay.kill('SIGTERM');

    const docs = withDb(a.dbPath, (db) => db.prepare('SELECT oid, name FROM sync_docs').all() as Array<{ oid: string; name: string }>);
    const deviceIds = withDb(b.dbPath, (db) => db.prepare("SELECT DISTINCT substr(name, instr(name, 'dev_')) FROM sync_docs WHERE name LIKE 'shard:%'").pluck().all() as string[]);
    const bConfig = withDb(b.dbPath, (db) => db.prepare('SELECT device_id FROM sync_config').pluck().get() as string);
    // Each marker, device and record ids, and the documents' names (their identities, which a
    // device seals with each chunk; the documents themselves do not hold them).
    const inDocuments = [
      ...Object.values(M),
      ...deviceIds,
      bConfig,
      ...mealIds,
      foodId,
      savedId,
      'chyme.root',
      'chyme.shard',
    ];
    const needles = [...inDocuments, ...docs.map((d) => d.name).filter((n) => n !== 'root')];
    assert.ok(docs.length >= 5 && deviceIds.length >= 1, JSON.stringify(docs));

    // The folder first (nothing opened it since the relay stopped), then the blobs inside relay.db.
    const files = filesUnder(relay.dataDir);
    assert.ok(files.some((f) => f.endsWith('relay.db')), files.join(', '));
    assert.equal(describeHits(scanFolder(relay.dataDir, needles)), '');
    const copy = join(dir, 'relay-copy.db');
    for (const suffix of ['', '-wal']) if (existsSync(join(relay.dataDir, `relay.db${suffix}`))) copyFileSync(join(relay.dataDir, `relay.db${suffix}`), `${copy}${suffix}`);
    const stored = blobs(copy, 'SELECT seq AS label, bytes FROM chunks');
    assert.ok(stored.length > 0);
    const hits = stored.flatMap((s) => scanBytes(s.bytes, needles, `chunk ${s.label}`));
    assert.equal(describeHits(hits), '');
    for (const s of stored) assert.throws(() => Automerge.load(s.bytes), `chunk ${s.label} loads as an Automerge document`);
    // The relay knows documents only by opaque ids that are not their names.
    const oids = withDb(copy, (db) => db.prepare('SELECT DISTINCT oid FROM chunks').pluck().all() as string[]);
    assert.deepEqual(oids.filter((o) => !/^[a-z2-7]{26}$/.test(o)), []);
    assert.deepEqual(new Set(oids), new Set(docs.map((d) => d.oid)));

    // The scanner reads what a device keeps: every marker is in B's copies of the documents.
    const bDocs = blobs(b.dbPath, 'SELECT name AS label, bytes FROM sync_docs');
    const found = new Set(bDocs.flatMap((d) => scanBytes(d.bytes, inDocuments, d.label)).map((h) => h.needle));
    assert.deepEqual(
      inDocuments.filter((n) => !found.has(n)),
      [],
      'markers the scanner did not find in B\'s documents',
    );
  });

  test('a changed byte and a chunk copied under another document are reported as integrity problems; every other document still converges', { timeout: 300_000 }, async () => {
    // The relay is stopped (the previous test). Which documents hold meals, as device A knows them.
    const docs = withDb(a.dbPath, (db) => db.prepare('SELECT oid, name FROM sync_docs').all() as Array<{ oid: string; name: string }>);
    const mealDocs = docs.filter((d) => d.name.startsWith('shard:meals/'));
    assert.ok(mealDocs.length >= 3, JSON.stringify(docs));
    const [damaged, target] = mealDocs as [{ oid: string; name: string }, { oid: string; name: string }];
    const foodDoc = docs.find((d) => d.name.startsWith('shard:foods:'))!;
    assert.ok(foodDoc, JSON.stringify(docs));
    const recordsIn = (oid: string) => withDb(a.dbPath, (db) => db.prepare('SELECT record_id FROM sync_records WHERE doc_oid = ?').pluck().all(oid) as string[]);
    const damagedMeals = new Set(recordsIn(damaged.oid));
    assert.ok(damagedMeals.size > 0);

    const { flipped, moved } = withDb(join(relay.dataDir, 'relay.db'), (db) => {
      const live = db.prepare('SELECT seq, sid, oid, kind, bytes FROM chunks WHERE covered_by IS NULL AND oid = ? ORDER BY seq');
      const victim = (live.all(damaged.oid) as Array<{ seq: number; bytes: Buffer }>).at(-1)!;
      const bytes = Buffer.from(victim.bytes);
      bytes[bytes.length >> 1]! ^= 0x01;
      db.prepare('UPDATE chunks SET bytes = ? WHERE seq = ?').run(bytes, victim.seq);
      // The food document's latest chunk (a change or a snapshot), stored again as a change of another document.
      const source = (live.all(foodDoc.oid) as Array<{ seq: number; sid: string; bytes: Buffer }>).at(-1)!;
      const inserted = db
        .prepare('INSERT INTO chunks (sid, oid, kind, covers, bytes, received_ms) VALUES (?, ?, 1, NULL, ?, ?)')
        .run(source.sid, target.oid, source.bytes, Date.now());
      return { flipped: victim.seq, moved: Number(inserted.lastInsertRowid) };
    });

    await relay.restart();
    await a.restart();
    const c = await startDevice(dir, 'third');
    try {
      const joined = await c.api('POST', '/v1/sync/join', { pairing_code: code, name: 'third' });
      assert.equal(joined.status, 200, JSON.stringify(joined.json));
      const integrity = await until(
        'both problems listed on the third device',
        async () => {
          const list = (await c.api('GET', '/v1/sync')).json.integrity as Array<{ relay_seq: number; problem: string }>;
          const seqs = list.map((p) => p.relay_seq);
          return seqs.includes(flipped) && seqs.includes(moved) ? list : undefined;
        },
        60_000,
      );
      for (const p of integrity) assert.match(p.problem, /\S/);
      // Everything but the damaged document's meals is the same on both.
      const withoutDamaged = (h: unknown) => {
        const copy = structuredClone(h) as { meals: Array<{ id: string }> };
        copy.meals = copy.meals.filter((m) => !damagedMeals.has(m.id));
        return JSON.stringify(copy);
      };
      let last = '';
      await until(
        'the third device equals the desk outside the damaged document',
        async () => {
          const [ha, hc] = await Promise.all([history(a), history(c)]);
          last = `desk ${withoutDamaged(ha)}\nthird ${withoutDamaged(hc)}`;
          return withoutDamaged(ha) === withoutDamaged(hc);
        },
        60_000,
      ).catch((err: Error) => {
        throw new Error(`${err.message}\n${last}`);
      });
      // The document that received the foreign chunk is whole.
      const targetMeals = recordsIn(target.oid);
      for (const id of targetMeals) assert.equal((await c.api('GET', `/v1/nutrition/meals/${id}`)).status, 200, id);
    } finally {
      await c.stop();
    }
  });
});

describe('sync: the relay\'s storage stays near the size of the documents (client compaction)', () => {
  let dir: string;
  let relay: RelayProcess;
  let a: Device;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'chyme-sync-compact-'));
    relay = await startRelay(join(dir, 'relay'), { env: { CHYME_RELAY_COMPACT_GRACE_MS: '500' } });
    a = await startDevice(dir, 'desk');
  });

  after(async () => {
    await a?.stop();
    await relay?.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  test('after 1,000 single-meal edits the relay holds at most twice a fresh save of every document, and a device joining afterwards pulls no more than that', { timeout: 600_000 }, async () => {
    const setup = await a.api('POST', '/v1/sync/setup', { relay: relay.url, token: relay.token, name: 'desk' });
    assert.equal(setup.status, 201, JSON.stringify(setup.json));
    const meal = await a.api('POST', '/v1/nutrition/meals', { timestamp: iso(Date.now() - 2 * HOUR), meal_type: 'lunch', description: 'edit 0', macros: { calories: 500 } });
    assert.equal(meal.status, 201);
    for (let i = 1; i <= 1000; i++) {
      const r = await a.api('PATCH', `/v1/nutrition/meals/${meal.json.id}`, { description: `edit ${i}` });
      assert.equal(r.status, 200, JSON.stringify(r.json));
    }
    await until('the desk has nothing pending', async () => (await a.api('GET', '/v1/sync')).json.pending_changes === 0, 60_000);

    const fresh = () => blobs(a.dbPath, 'SELECT oid AS label, bytes FROM sync_docs').reduce((n, d) => n + Automerge.save(Automerge.load(d.bytes)).length, 0);
    const stored = () => withDb(join(relay.dataDir, 'relay.db'), (db) => db.prepare('SELECT COALESCE(SUM(LENGTH(bytes)), 0) FROM chunks').pluck().get() as number);
    let figures = '';
    // Compaction and the relay's purge after its grace period (500 ms) happen in the background:
    // the deadline bounds a hang; the bound on size is what is checked.
    await until(
      'the relay\'s chunks within twice a fresh save',
      () => {
        const [s, f] = [stored(), fresh()];
        figures = `relay ${s} B, fresh save ${f} B`;
        return s <= 2 * f;
      },
      60_000,
    ).catch((err: Error) => {
      throw new Error(`${err.message}: ${figures}`);
    });
    process.stdout.write(`# compaction: ${figures}\n`);

    // The new device reaches the relay through a proxy that counts what the relay sends it.
    const proxy = await countingProxy(relay.url);
    const c = await startDevice(dir, 'later');
    try {
      const { secret } = decodePairingCode((await a.api('GET', '/v1/sync/pairing-code')).json.pairing_code);
      const freshBeforeJoin = fresh();
      const joined = await c.api('POST', '/v1/sync/join', { pairing_code: encodePairingCode({ relay: proxy.url, secret }), name: 'later' });
      assert.equal(joined.status, 200, JSON.stringify(joined.json));
      // Every byte the relay sent during the join (chunks, framing, acknowledgements, presence notes).
      const pulled = proxy.downstream();
      process.stdout.write(`# join after the edits: ${pulled} B from the relay, fresh save ${freshBeforeJoin} B (${(pulled / freshBeforeJoin).toFixed(2)}x)\n`);
      // The bound is the relay's own (twice a fresh save, checked above) plus the messages' framing:
      // what the relay holds at the join depends on whether the desk's last compaction ran yet,
      // so a tighter bound would test the timing; the ratio is recorded (1.1-1.4x so far).
      assert.ok(pulled <= 2 * freshBeforeJoin + 2048, `the join pulled ${pulled} B, more than the relay may hold (2x a fresh save, ${freshBeforeJoin} B, and 2 KB of framing)`);
      const h = (await converged([a, c])) as { meals: Array<{ description: string }> };
      assert.deepEqual(h.meals.map((m) => m.description), ['edit 1000']);
    } finally {
      await c.stop();
      proxy.close();
    }
  });
});

test('a relay folder of the old, unencrypted format is refused with one sentence and left unchanged', { timeout: 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'chyme-sync-old-relay-'));
  try {
    const data = join(dir, 'relay');
    mkdirSync(join(data, 'documents', 'st'), { recursive: true });
    writeFileSync(join(data, 'documents', 'st', 'orage-adapter-id'), 'a1b2c3');
    writeFileSync(join(data, 'relay-token'), 'old-token-0123456789\n', { mode: 0o600 });
    const snapshot = () => filesUnder(data).map((f) => `${relative(data, f)}=${readFileSync(f).toString('hex')}`).sort();
    const before = snapshot();
    const r = await runCliAsync(['relay', '--port', '0', '--data', data]);
    assert.notEqual(r.status, 0);
    assert.equal(r.stdout, '');
    assertOneSentence(r.stderr, /old/);
    assert.deepEqual(snapshot(), before);
    assert.deepEqual(readdirSync(data).sort(), ['documents', 'relay-token']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
