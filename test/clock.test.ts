import assert from 'node:assert/strict';
import { mkdtempSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { FileClock } from '../server/clock.js';

/** The test clock `chyme serve` reads from CHYME_TEST_CLOCK_FILE (the e2e tests' setClock). */
describe('FileClock', () => {
  const dir = mkdtempSync(join(tmpdir(), 'chyme-clock-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'clock.txt');
  /** Writes the instant as the e2e harness does, with the file's modification time `mtimeS` (seconds). */
  const set = (ms: number, mtimeS: number) => {
    writeFileSync(`${file}.tmp`, String(ms));
    utimesSync(`${file}.tmp`, mtimeS, mtimeS);
    renameSync(`${file}.tmp`, file);
  };

  test('reads the instant written, and a new instant when it is rewritten', () => {
    set(1_000_000, 1000);
    const clock = new FileClock(file);
    assert.ok(Math.abs(clock.now() - 1_000_000) < 1000);
    set(5_000_000, 1001);
    assert.ok(Math.abs(clock.now() - 5_000_000) < 1000);
  });

  test('the same instant written again sets the clock back to it: time flowed from the first writing before', () => {
    set(1_000_000, 2000);
    const clock = new FileClock(file);
    // Time flows from the reading; pretend a minute went by since.
    (clock as unknown as { readAt: number }).readAt -= 60_000;
    assert.ok(clock.now() - 1_000_000 >= 60_000, 'a minute on');
    set(1_000_000, 2001);
    assert.ok(Math.abs(clock.now() - 1_000_000) < 1000, 'back to the instant written');
  });

  test('an empty or unreadable file keeps the last good reading', () => {
    set(7_000_000, 3000);
    const clock = new FileClock(file);
    writeFileSync(file, '');
    assert.ok(Math.abs(clock.now() - 7_000_000) < 1000);
    writeFileSync(file, 'noon');
    assert.ok(Math.abs(clock.now() - 7_000_000) < 1000);
  });
});
