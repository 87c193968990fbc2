import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CoalescedLoads, type LoadOutcome } from '../../renderer/src/lib/loads.js';

/** A loader whose answers the test hands out one by one, in the order it chooses. */
function controlledLoader() {
  const calls: Array<{ signal: AbortSignal; answer: (n: number) => void; fail: (e: unknown) => void }> = [];
  let n = 0;
  const load = (signal: AbortSignal) =>
    new Promise<number>((resolve, reject) => {
      n++;
      calls.push({ signal, answer: resolve, fail: reject });
      signal.addEventListener('abort', () => reject(Object.assign(new Error('aborted'), { name: 'AbortError' })));
    });
  return { load, calls, started: () => n };
}

const settled = () => new Promise((r) => setImmediate(r));

test('reloads asked for faster than the answers come: every answer lands, none is aborted, and one load follows the last reload', async () => {
  const { load, calls, started } = controlledLoader();
  const shown: Array<[LoadOutcome<number>, boolean]> = [];
  const loads = new CoalescedLoads(load, (o, first) => shown.push([o, first]));
  assert.equal(started(), 1);
  // Events keep coming while the first answer is slow: the load in flight is kept.
  for (let i = 0; i < 10; i++) loads.reload();
  assert.equal(started(), 1, 'reloads wait for the load in flight');
  assert.equal(calls[0]!.signal.aborted, false);
  calls[0]!.answer(1);
  await settled();
  assert.deepEqual(shown, [[{ data: 1 }, true]]);
  assert.equal(started(), 2, 'one load for all the reloads asked for meanwhile');
  loads.reload();
  calls[1]!.answer(2);
  await settled();
  assert.equal(started(), 3);
  calls[2]!.answer(3);
  await settled();
  assert.deepEqual(shown, [[{ data: 1 }, true], [{ data: 2 }, false], [{ data: 3 }, false]]);
  // Nothing in flight: a reload loads at once.
  loads.reload();
  assert.equal(started(), 4);
});

test('an error is shown like an answer (the retry reloads), and a stopped resource aborts its load and shows nothing more', async () => {
  const { load, calls, started } = controlledLoader();
  const shown: Array<LoadOutcome<number>> = [];
  const loads = new CoalescedLoads(load, (o) => shown.push(o));
  const boom = new Error('503');
  calls[0]!.fail(boom);
  await settled();
  assert.deepEqual(shown, [{ error: boom }]);
  loads.reload();
  loads.reload();
  assert.equal(started(), 2);
  loads.stop();
  assert.equal(calls[1]!.signal.aborted, true);
  calls[1]!.answer(5);
  await settled();
  loads.reload();
  assert.equal(started(), 2, 'a stopped resource loads nothing more');
  assert.deepEqual(shown, [{ error: boom }]);
});

test('a loader that fails with an AbortError of its own (not aborted by the resource) still settles, so reloads do not wait forever', async () => {
  const { load, calls, started } = controlledLoader();
  const shown: Array<LoadOutcome<number>> = [];
  const loads = new CoalescedLoads(load, (o) => shown.push(o));
  const timeout = Object.assign(new Error('timed out'), { name: 'AbortError' });
  loads.reload();
  calls[0]!.fail(timeout);
  await settled();
  assert.deepEqual(shown, [{ error: timeout }]);
  assert.equal(started(), 2, 'the reload asked for meanwhile runs');
});

test('invalidate: the load in flight, older than a write shown at once, is not shown; the load after it is', async () => {
  const { load, calls, started } = controlledLoader();
  const shown: Array<LoadOutcome<number>> = [];
  const loads = new CoalescedLoads(load, (o) => shown.push(o));
  // During the first load nothing is on screen to amend: its answer is shown, and one load follows.
  loads.invalidate();
  calls[0]!.answer(0);
  await settled();
  assert.deepEqual(shown, [{ data: 0 }]);
  calls[1]!.answer(1);
  await settled();
  assert.deepEqual(shown, [{ data: 0 }, { data: 1 }]);
  shown.length = 0;
  // A reload (an event) is in flight when a write's answer is shown.
  loads.reload();
  assert.equal(started(), 3);
  loads.invalidate();
  assert.equal(started(), 3, 'it waits for the load in flight');
  calls[2]!.answer(2);
  await settled();
  assert.deepEqual(shown, [], 'the answer from before the write is not shown');
  assert.equal(started(), 4);
  calls[3]!.answer(3);
  await settled();
  assert.deepEqual(shown, [{ data: 3 }]);
  // With nothing in flight it loads at once, and that answer is shown.
  loads.invalidate();
  assert.equal(started(), 5);
  calls[4]!.answer(4);
  await settled();
  assert.deepEqual(shown, [{ data: 3 }, { data: 4 }]);
  // A stale load's error is still shown (the data on screen stays; the retry reloads).
  loads.reload();
  loads.invalidate();
  const boom = new Error('503');
  calls[5]!.fail(boom);
  await settled();
  assert.deepEqual(shown.at(-1), { error: boom });
});
