/**
 * Every command against every state the database file can be in: it answers with its documented
 * exit status and, when it cannot do its job, with one sentence on stderr (never a stack trace).
 * A file that is not a Chyme database, or that a command refuses, is left byte for byte as it was.
 * The table below is README.md's "What each state of the file gives".
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { runCli, runCliAsync, startServe, type ServeProcess } from '../helpers/cli.js';
import * as fx from '../imports/fixtures.js';
import { zipOf } from '../imports/zip.js';

const root = mkdtempSync(join(tmpdir(), 'chyme-states-'));
after(() => rmSync(root, { recursive: true, force: true }));
let dirCount = 0;
const freshDir = () => {
  const dir = join(root, String(dirCount++));
  return mkdtempSync(dir);
};

const STATES = ['missing', 'empty', 'keys-only', 'newer', 'damaged', 'foreign', 'not-sqlite', 'read-only', 'locked', 'served'] as const;
type State = (typeof STATES)[number];

/** The commands, each with what it needs besides --db (filled in once the fixtures exist). */
const COMMANDS = ['serve', 'link', 'keys create', 'keys list', 'keys revoke', 'backup', 'restore', 'export', 'import', 'check'] as const;
type CommandName = (typeof COMMANDS)[number];

/**
 * The exit status of each command in each state: 0 done, 3 newer Chyme, 5 file refused, 6 could
 * not do it now. keys revoke revokes the key the database was made with.
 */
const EXPECTED: Record<State, Record<CommandName, number>> = {
  // Only serve, keys create, import and restore make a database; the rest refuse to read one that is not there.
  missing: { serve: 0, link: 5, 'keys create': 0, 'keys list': 5, 'keys revoke': 5, backup: 5, restore: 0, export: 5, import: 0, check: 5 },
  empty: { serve: 0, link: 5, 'keys create': 0, 'keys list': 5, 'keys revoke': 5, backup: 5, restore: 0, export: 5, import: 0, check: 5 },
  // link needs a running server: none runs.
  'keys-only': { serve: 0, link: 6, 'keys create': 0, 'keys list': 0, 'keys revoke': 0, backup: 0, restore: 0, export: 0, import: 0, check: 0 },
  newer: { serve: 3, link: 3, 'keys create': 3, 'keys list': 3, 'keys revoke': 3, backup: 3, restore: 3, export: 3, import: 3, check: 3 },
  // restore is how a damaged database is replaced (its bytes are kept aside).
  damaged: { serve: 5, link: 5, 'keys create': 5, 'keys list': 5, 'keys revoke': 5, backup: 5, restore: 0, export: 5, import: 5, check: 5 },
  foreign: { serve: 5, link: 5, 'keys create': 5, 'keys list': 5, 'keys revoke': 5, backup: 5, restore: 5, export: 5, import: 5, check: 5 },
  'not-sqlite': { serve: 5, link: 5, 'keys create': 5, 'keys list': 5, 'keys revoke': 5, backup: 5, restore: 5, export: 5, import: 5, check: 5 },
  // What only reads works; what would write is refused.
  'read-only': { serve: 6, link: 6, 'keys create': 6, 'keys list': 0, 'keys revoke': 6, backup: 0, restore: 6, export: 0, import: 6, check: 0 },
  // Reads go on beside another program's write lock (WAL); a write waits 5 s, then gives up.
  locked: { serve: 6, link: 6, 'keys create': 6, 'keys list': 0, 'keys revoke': 6, backup: 0, restore: 6, export: 0, import: 6, check: 0 },
  // Everything works beside a running server, except a second server on the same file.
  served: { serve: 6, link: 0, 'keys create': 0, 'keys list': 0, 'keys revoke': 0, backup: 0, restore: 0, export: 0, import: 0, check: 0 },
};

const sha256 = (path: string) => (existsSync(path) ? createHash('sha256').update(readFileSync(path)).digest('hex') : 'absent');

let template = ''; // a database `chyme keys create` made
let keysOnly = ''; // the same as earlier builds' `keys create` left it: no settings row
let goodBackup = ''; // a whole Chyme database, for restore
let exportFile = ''; // an Apple Health export, for import
let keyId = '';

before(() => {
  const dir = freshDir();
  template = join(dir, 'template.db');
  const created = runCli(['keys', 'create', '--name', 'first', '--scopes', 'all', '--db', template]);
  assert.equal(created.status, 0, created.stderr);
  keyId = /(key_[0-9A-Za-z]+)/.exec(created.stdout)![1]!;
  exportFile = join(dir, 'export.zip');
  writeFileSync(exportFile, zipOf([{ name: 'apple_health_export/export.xml', data: fx.appleExportXml() }]));
  goodBackup = join(dir, 'good.db');
  keysOnly = join(dir, 'keys-only.db');
  const raw = new Database(template, { readonly: true });
  raw.prepare('VACUUM INTO ?').run(goodBackup);
  raw.close();
  copyFileSync(template, keysOnly);
  // Earlier builds' `keys create` made the tables and the key, but no settings row.
  const old = new Database(keysOnly);
  old.exec('DELETE FROM settings');
  old.close();
});

/** A file in the given state at a fresh path (the path is all a missing file is). */
function makeState(state: Exclude<State, 'locked' | 'served'>): string {
  const db = join(freshDir(), 'chyme.db');
  switch (state) {
    case 'missing':
      break;
    case 'empty':
      writeFileSync(db, '');
      break;
    case 'keys-only':
      copyFileSync(keysOnly, db);
      break;
    case 'newer': {
      copyFileSync(template, db);
      const raw = new Database(db);
      raw.pragma('user_version = 999');
      raw.close();
      break;
    }
    case 'damaged': {
      // Every page after the first overwritten: the header is SQLite's, the tables are garbage.
      const bytes = readFileSync(template);
      bytes.fill(0x5a, 4096);
      writeFileSync(db, bytes);
      break;
    }
    case 'foreign': {
      const raw = new Database(db);
      raw.exec("CREATE TABLE bookmarks (url TEXT NOT NULL, title TEXT); INSERT INTO bookmarks VALUES ('https://example.org/', 'Example')");
      raw.close();
      break;
    }
    case 'not-sqlite':
      writeFileSync(db, 'Shopping list\n- oats\n- milk\n'.repeat(100));
      break;
    case 'read-only':
      copyFileSync(template, db);
      chmodSync(db, 0o444);
      break;
  }
  return db;
}

function argsFor(command: CommandName, db: string): string[] {
  const base: Record<CommandName, string[]> = {
    serve: ['serve', '--port', '0', '--quiet'],
    link: ['link'],
    'keys create': ['keys', 'create', '--name', 'matrix', '--scopes', 'all'],
    'keys list': ['keys', 'list'],
    'keys revoke': ['keys', 'revoke', keyId],
    backup: ['backup'],
    restore: ['restore', goodBackup],
    export: ['export'],
    import: ['import', exportFile, '--tz', 'UTC', '--json'],
    check: ['check'],
  };
  return [...base[command], '--db', db];
}

interface Outcome {
  status: number | null;
  stderr: string;
}

/** Runs one command; a serve that starts is stopped again (exit 0 when it stops cleanly). */
async function run(command: CommandName, db: string, expected: number): Promise<Outcome> {
  if (command === 'serve' && expected === 0) {
    const serve = await startServe(['--db', db]);
    return { status: await serve.stop(), stderr: serve.stderr() };
  }
  return runCliAsync(argsFor(command, db));
}

/** A refusal or failure is one sentence on one line, naming no stack frame. */
function assertOneSentence(label: string, outcome: Outcome): void {
  const lines = outcome.stderr.trim().split('\n');
  assert.equal(lines.length, 1, `${label}: one line on stderr, got:\n${outcome.stderr}`);
  assert.match(lines[0]!, /^chyme: [A-Z/]/, `${label}: a sentence, got: ${lines[0]}`);
  assert.doesNotMatch(outcome.stderr, /\n\s+at |Error:/, label);
}

function check(state: State, command: CommandName, outcome: Outcome): void {
  const expected = EXPECTED[state][command];
  const label = `${command} on a ${state} file`;
  assert.equal(outcome.status, expected, `${label}: exit ${outcome.status}, expected ${expected}\n${outcome.stderr}`);
  if (expected !== 0) assertOneSentence(label, outcome);
}

/** At most `n` at a time: the commands are separate processes on a shared machine. */
async function inPool<T>(items: T[], n: number, fn: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  await Promise.all(Array.from({ length: n }, async () => {
    for (let item = queue.shift(); item !== undefined; item = queue.shift()) await fn(item);
  }));
}

describe('every command on every state of the database file', () => {
  for (const state of ['missing', 'empty', 'keys-only', 'newer', 'damaged', 'foreign', 'not-sqlite', 'read-only'] as const) {
    test(`the file is ${state}`, async () => {
      const failures: string[] = [];
      await inPool([...COMMANDS], 4, async (command) => {
        const db = makeState(state);
        const before = sha256(db);
        const expected = EXPECTED[state][command];
        const outcome = await run(command, db, expected);
        try {
          check(state, command, outcome);
          // Refused or failed: the file is exactly as it was (or still absent).
          if (expected !== 0) assert.equal(sha256(db), before, `${command} on a ${state} file changed it`);
        } catch (err) {
          failures.push((err as Error).message);
        }
      });
      assert.deepEqual(failures, []);
    });
  }

  test('a file another program holds a write lock on', async () => {
    const failures: string[] = [];
    await inPool([...COMMANDS], 4, async (command) => {
      // One locked copy per command: a command that works (keys list) must not meet another's changes.
      const db = join(freshDir(), 'chyme.db');
      copyFileSync(template, db);
      const holder = new Database(db);
      holder.exec('BEGIN IMMEDIATE');
      try {
        const before = sha256(db);
        const outcome = await run(command, db, EXPECTED.locked[command]);
        check('locked', command, outcome);
        if (outcome.status !== 0) assert.equal(sha256(db), before, `${command} on a locked file changed it`);
        if (outcome.status === 6 && command !== 'link') assert.match(outcome.stderr, /locked by another program|in use/, command);
      } catch (err) {
        failures.push((err as Error).message);
      } finally {
        holder.exec('ROLLBACK');
        holder.close();
      }
    });
    assert.deepEqual(failures, []);
  });

  test('a file a running chyme serve has open', async () => {
    const db = join(freshDir(), 'chyme.db');
    copyFileSync(template, db);
    let serve: ServeProcess | undefined;
    try {
      serve = await startServe(['--db', db]);
      const failures: string[] = [];
      // One after the other, restore last: it swaps the file under the server.
      for (const command of COMMANDS) {
        const outcome = await runCliAsync(argsFor(command, db));
        try {
          check('served', command, outcome);
          if (command === 'serve') assert.match(outcome.stderr, new RegExp(`already running on .* at ${serve.url}`));
        } catch (err) {
          failures.push((err as Error).message);
        }
      }
      assert.deepEqual(failures, []);
      assert.equal((await fetch(`${serve.url}/v1/health`)).status, 200, 'the running server carries on');
    } finally {
      assert.equal(await serve?.stop(), 0);
    }
  });

  test('an export made from a database an earlier keys create left holds its key and default settings', () => {
    const db = makeState('keys-only');
    const r = runCli(['export', '--db', db]);
    assert.equal(r.status, 0, r.stderr);
    const doc = JSON.parse(r.stdout) as { settings: { timezone: string }; meals: unknown[] };
    assert.equal(doc.meals.length, 0);
    assert.ok(doc.settings.timezone);
    assert.ok(statSync(db).size > 0);
  });
});

describe('--version and COMMAND --help', () => {
  test('--version prints the package version', () => {
    const version = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
    const r = runCli(['--version']);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, `chyme ${version}\n`);
  });

  test('every command prints its own usage for --help and exits 0, touching no database', async () => {
    const db = join(freshDir(), 'never.db');
    const commands = ['serve', 'link', 'keys', 'backup', 'restore', 'export', 'import', 'check'];
    const runs = await Promise.all(commands.map((command) => runCliAsync([command, '--help', '--db', db])));
    for (const [i, command] of commands.entries()) {
      const r = runs[i]!;
      assert.equal(r.status, 0, `${command}: ${r.stderr}`);
      assert.equal(r.stderr, '', command);
      assert.match(r.stdout, new RegExp(`^Usage:\\n  chyme ${command}\\b`), command);
      assert.doesNotMatch(r.stdout, /chyme (serve|link|backup|restore|export|import|check)\b[^\n]*\n[\s\S]*chyme (serve|link|backup|restore|export|import|check)\b/, `${command}: only its own usage`);
    }
    assert.match(runCli(['keys', 'create', '-h']).stdout, /chyme keys create --name NAME/);
    assert.match(runCli(['help', 'export']).stdout, /^Usage:\n  chyme export /);
    assert.equal(existsSync(db), false, '--help opens no database');
  });
});
