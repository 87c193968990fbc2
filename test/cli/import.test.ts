import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { runCli, startServe } from '../helpers/cli.js';
import * as fx from '../imports/fixtures.js';
import { zipOf } from '../imports/zip.js';

function workspace(): { dir: string; db: string; file(name: string, data: string | Buffer): string } {
  const dir = mkdtempSync(join(tmpdir(), 'chyme-cli-import-'));
  return {
    dir,
    db: join(dir, 'chyme.db'),
    file(name, data) {
      const path = join(dir, name);
      writeFileSync(path, data);
      return path;
    },
  };
}

describe('chyme import', () => {
  test('--json prints one import object; a second run adds nothing; --dry-run writes nothing', () => {
    const w = workspace();
    const zip = w.file('export.zip', zipOf([{ name: 'apple_health_export/export.xml', data: fx.appleExportXml() }]));
    const dry = runCli(['import', zip, '--dry-run', '--json', '--tz', 'Europe/Berlin', '--db', w.db]);
    assert.equal(dry.status, 0, dry.stderr);
    const preview = JSON.parse(dry.stdout);
    assert.deepEqual([preview.object, preview.id, preview.status, preview.meals_added, preview.sleep_added], ['import', null, 'dry_run', 3, 3]);
    const first = JSON.parse(runCli(['import', zip, '--json', '--tz', 'Europe/Berlin', '--db', w.db]).stdout);
    assert.match(first.id, /^imp_/);
    assert.deepEqual([first.source, first.meals_added, first.sleep_added, first.first_day, first.last_day], ['apple_health', 3, 3, '2026-06-11', '2026-06-13']);
    assert.deepEqual(Object.keys(first.warnings[0]).sort(), ['file', 'line', 'message']);
    const second = JSON.parse(runCli(['import', zip, '--json', '--db', w.db]).stdout);
    assert.deepEqual([second.meals_added, second.sleep_added, second.duplicates_skipped], [0, 0, 7]);
  });

  test('works while chyme serve has the same file open, and imports Chyme\'s own export', async () => {
    const w = workspace();
    const serve = await startServe(['--db', w.db, '--tz', 'Europe/Berlin']);
    try {
      const servings = w.file('servings.csv', fx.cronometerWideServings());
      const r = runCli(['import', servings, '--from', 'cronometer', '--db', w.db]);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /^Imported from Cronometer: 6 meals and 0 sleep sessions, 2026-06-01 to 2026-06-02\.$/m);
      assert.match(r.stdout, /Times without an offset were read in Europe\/Berlin/);
      assert.match(r.stdout, /Warning: servings\.csv line 10: Day "06\/03\/2026"/);
      const own = runCli(['import', w.file('chyme-export.json', fx.chymeExport()), '--json', '--db', w.db]);
      assert.equal(own.status, 0, own.stderr);
      assert.deepEqual([JSON.parse(own.stdout).source, JSON.parse(own.stdout).meals_added], ['chyme', 1]);
      const health = await fetch(`${serve.url}/v1/health`);
      assert.equal(health.status, 200, 'the server kept running');
    } finally {
      assert.equal(await serve.stop('SIGTERM'), 0);
    }
  });

  test('refused input is one sentence on stderr (exit 1); a bad command line shows the usage (exit 2)', () => {
    const w = workspace();
    const wrong = runCli(['import', w.file('servings.csv', fx.cronometerWideServings()), '--from', 'fitbit', '--db', w.db]);
    assert.equal(wrong.status, 1);
    assert.match(wrong.stderr, /^chyme: servings\.csv is not Fitbit data: expected Fitbit sleep data.*found a Cronometer servings\.csv\.\n$/);
    const missing = runCli(['import', join(w.dir, 'nope.zip'), '--db', w.db]);
    assert.match(missing.stderr, /nope\.zip does not exist/);
    const usage = runCli(['import', '--from', 'garmin', 'x.csv', '--db', w.db]);
    assert.equal(usage.status, 2);
    assert.match(usage.stderr, /--from must be apple-health, cronometer/);
    assert.match(usage.stderr, /chyme import FILE\.\.\./);
  });
});
