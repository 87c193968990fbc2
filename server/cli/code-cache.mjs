// Writes V8's code cache of the CLI bundle (build/server/cli/cli.cjs.cache, read by load-cli.ts):
// a start of `chyme serve` on an empty database in this process, as main.js would start it (the
// compact heap's flags first: V8 takes a cache only under the flags it was made with), through its
// first answers: the state on an empty day, a meal, the state after it. The cache then holds every
// function compiled so far, so a cold start compiles almost nothing of the bundle.
// Run by bundle.mjs; failing here fails the build (a start that cannot answer is a broken build).
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const build = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'build', 'server');
const { useCompactHeap } = await import(join(build, 'memory.js'));
useCompactHeap();
const { loadCli, codeCache, CODE_CACHE } = await import(join(build, 'cli', 'load-cli.js'));
const { openDatabase } = await import(join(build, 'db', 'connection.js'));
const { createApiKey } = await import(join(build, 'auth', 'keys.js'));
const { SCOPES } = await import(join(build, 'auth', 'scopes.js'));

const dir = mkdtempSync(join(tmpdir(), 'chyme-code-cache-'));
try {
  const dbPath = join(dir, 'chyme.db');
  const db = openDatabase(dbPath);
  const secret = createApiKey(db, { name: 'code cache', scopes: [...SCOPES], nowMs: Date.now() }).secret;
  db.close();

  const cli = await loadCli();
  // serve prints its address on stdout (and a launch URL of no use here): read it, print none.
  const url = await new Promise((resolve, reject) => {
    process.stdout.write = (chunk) => {
      const m = /^Chyme listening on (\S+)$/m.exec(String(chunk));
      if (m) resolve(m[1]);
      return true;
    };
    cli.runCli(['serve', '--db', dbPath, '--port', '0', '--quiet']).catch(reject);
  });

  const headers = { authorization: `Bearer ${secret}`, 'content-type': 'application/json' };
  const ask = async (path, init = {}) => {
    const res = await fetch(`${url}${path}`, { headers, ...init });
    if (!res.ok) throw new Error(`${init.method ?? 'GET'} ${path} answered ${res.status}: ${await res.text()}`);
    return res.json();
  };
  await ask('/v1/digestion/state');
  await ask('/v1/nutrition/meals', { method: 'POST', body: JSON.stringify({ timestamp: new Date().toISOString(), meal_type: "lunch", foods: [{ name: "soup", calories: 500 }] }) });
  await ask('/v1/digestion/state');

  const tmp = `${CODE_CACHE}.${process.pid}.tmp`;
  writeFileSync(tmp, codeCache());
  renameSync(tmp, CODE_CACHE);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
// The service keeps the process alive; its database was a temporary one.
process.exit(0);
