/**
 * A meal logged on one device reaches the other while that one's merge worker is still busy with
 * a month another device imported (issue 27: "each meal arrives within 5 s" beside an import).
 * The receiving service's merger is the worker's stand-in: it merges as the worker does (the
 * engine gets the output, never its copy) and holds the merge of one document, an old month, until
 * the test lets it go. A real relay (in-process) and two real services on 127.0.0.1.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { deriveKeys } from '../../server/sync/crypto.js';
import { shardName } from '../../server/sync/documents.js';
import { decodePairingCode } from '../../server/sync/index.js';
import { mergeDoc, type MergeInput } from '../../server/sync/merge-doc.js';
import type { DocMerger } from '../../server/sync/merger.js';
import { startRelay, type Relay } from '../../server/sync/relay.js';
import { startTestService, TEST_NOW, type TestService } from '../helpers/service.js';
import { until } from '../helpers/sync.js';

/** A merger off the engine's thread in all but the thread: merges of the documents in `hold` wait for release(). */
function heldMerger() {
  const hold = new Set<string>();
  let released = false;
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let sawHeld!: () => void;
  const held = new Promise<void>((r) => (sawHeld = r));
  const merger: DocMerger = {
    async merge(input: MergeInput) {
      if (hold.has(input.oid) && !released) {
        sawHeld();
        await gate;
      }
      return { output: mergeDoc(input).output };
    },
    warm: true,
    close: () => Promise.resolve(),
  };
  return {
    merger,
    hold,
    held,
    release() {
      released = true;
      release();
    },
  };
}

const TODAY = new Date(TEST_NOW).toISOString().slice(0, 10);
/** A bound on hangs, not a timing: each check is a real request. */
const ARRIVES_MS = 60_000;

describe('a live meal beside a merge in the worker', () => {
  let dir: string;
  let relay: Relay;
  let desk: TestService;
  let laptop: TestService;
  const gated = heldMerger();

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'chyme-live-merge-'));
    relay = await startRelay({ host: '127.0.0.1', port: 0, dataDir: join(dir, 'relay'), log: () => undefined });
    desk = await startTestService({ sync: { retryMs: 200 } });
    laptop = await startTestService({ sync: { retryMs: 200, merger: () => gated.merger } });
  });

  after(async () => {
    gated.release();
    await laptop?.stop();
    await desk?.stop();
    await relay?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const mealsOn = async (t: TestService, from: string, to: string) => {
    const r = await t.request('GET', `/v1/nutrition/meals?start_date=${from}&end_date=${to}&limit=100`);
    assert.equal(r.status, 200, r.text);
    return r.body.data as Array<{ description: string }>;
  };

  test("a meal logged now is applied while an old month's merge is held; the month follows once let go", async () => {
    const first = await desk.request('POST', '/v1/nutrition/meals', { body: { timestamp: `${TODAY}T07:30:00Z`, meal_type: 'breakfast', description: 'porridge', macros: { calories: 300 } } });
    assert.equal(first.status, 201, first.text);
    const setup = await desk.request('POST', '/v1/sync/setup', { body: { relay: relay.url, token: relay.token, name: 'Desk' } });
    assert.equal(setup.status, 201, setup.text);
    const deskId: string = setup.body.device_id;
    const code = (await desk.request('GET', '/v1/sync/pairing-code')).body.pairing_code as string;
    const joined = await laptop.request('POST', '/v1/sync/join', { body: { pairing_code: code, name: 'Laptop' } });
    assert.equal(joined.status, 200, joined.text);
    await until('the breakfast on the laptop', async () => (await mealsOn(laptop, TODAY, TODAY)).length === 1, ARRIVES_MS);

    // A month long past, new to both: its document's merge on the laptop is held.
    const keys = await deriveKeys(decodePairingCode(code).secret);
    gated.hold.add(await keys.oid(shardName('meals/2025-03', deskId)));
    const old = await desk.request('POST', '/v1/nutrition/meals', { body: { timestamp: '2025-03-10T12:00:00Z', meal_type: 'lunch', description: 'imported lunch', macros: { calories: 600 } } });
    assert.equal(old.status, 201, old.text);
    await gated.held;

    const live = await desk.request('POST', '/v1/nutrition/meals', { body: { timestamp: `${TODAY}T12:00:00Z`, meal_type: 'lunch', description: 'soup just now', macros: { calories: 400 } } });
    assert.equal(live.status, 201, live.text);
    await until('the meal logged now on the laptop while the old month is still merging', async () => (await mealsOn(laptop, TODAY, TODAY)).some((m) => m.description === 'soup just now'), ARRIVES_MS);
    assert.deepEqual(await mealsOn(laptop, '2025-03-01', '2025-03-31'), [], 'the old month is still being merged');
    assert.deepEqual((await laptop.request('GET', '/v1/sync')).body.integrity, []);

    gated.release();
    await until('the old month on the laptop', async () => (await mealsOn(laptop, '2025-03-01', '2025-03-31')).length === 1, ARRIVES_MS);
    const after = (await laptop.request('GET', '/v1/sync')).body;
    assert.deepEqual(after.integrity, [], 'no chunk skipped');
    assert.equal(after.connected, true);
    assert.deepEqual((await mealsOn(laptop, TODAY, TODAY)).map((m) => m.description).sort(), ['porridge', 'soup just now']);
  });
});
