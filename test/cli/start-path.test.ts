/**
 * What every command compiles before it runs: the CLI bundle (build/server/cli/cli.cjs, one
 * file), loaded through load-cli.ts with its V8 code cache. Packages are bundled into it
 * (server/cli/bundle.mjs), so a heavy one imported statically anywhere in server/ lands on the
 * start path of `chyme serve` unseen: the MQTT client (~850 KB, loaded once a broker is set) and
 * the MCP SDK must stay out of it, and from node_modules it may load only better-sqlite3.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ROOT, runCli, startServe } from '../helpers/cli.js';

const CLI_DIR = join(ROOT, 'build', 'server', 'cli');
const BUNDLE = join(CLI_DIR, 'cli.cjs');
const LOADER = join(CLI_DIR, 'load-cli.js');
const built = { skip: existsSync(BUNDLE) ? false : 'not built' };

test('the CLI bundle holds the packages it starts with, and neither the MQTT client nor the MCP SDK', built, () => {
  const text = readFileSync(BUNDLE, 'utf8');
  // esbuild heads each bundled file with its path.
  const paths = [...text.matchAll(/^\s*\/\/ (node_modules\/\S+)$/gm)].map((m) => m[1]!);
  const bundled = new Set(paths.map((p) => /^node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(p)![1]!));
  assert.ok(bundled.has('express'), 'packages are bundled (express is)');
  for (const lazy of ['mqtt', 'mqtt-packet', '@modelcontextprotocol/sdk', '@automerge/automerge']) assert.ok(!bundled.has(lazy), `${lazy} is in the bundle`);
  // Packages it requires (the rest are bundled or loaded with import() on first use): at its
  // top, better-sqlite3; inside the modules that need them, iconv-lite's tables, Automerge (in the
  // sync engine, which runs only once sync is on) and ws's optional native helpers.
  const required = new Set([...text.matchAll(/\brequire\("([^"]+)"\)/g)].map((m) => m[1]!).filter((s) => !s.startsWith('node:') && !builtinModules.includes(s)));
  assert.deepEqual([...required].sort(), ['@automerge/automerge', 'better-sqlite3', 'bufferutil', 'iconv-lite/encodings', 'utf-8-validate']);
  assert.deepEqual(
    [...text.matchAll(/^var \S+ = (?:__toESM\()?require\("([^"]+)"\)/gm)].map((m) => m[1]!).filter((s) => !s.startsWith('node:') && !builtinModules.includes(s)),
    text.match(/^var \S+ = (?:__toESM\()?require\("better-sqlite3"\)/gm)!.map(() => 'better-sqlite3'),
    'at its top level the bundle requires only better-sqlite3',
  );
  // import() goes through load-cli.ts's importer (bundle.mjs): a function restored from the code
  // cache has lost the script's own import() callback in Node 20.
  assert.deepEqual(text.match(/\bimport\("[^"]+"\)/g), null);
  assert.match(text, /__chymeImport\("\.\.\/mqtt\/package\.js"\)/);
  // What the start path need not parse (server/cli/bundle.mjs, "lean-start"): iconv-lite's
  // encoding tables load on the first body decoded; of zod's locales only English is bundled.
  assert.deepEqual(paths.filter((p) => p.startsWith('node_modules/iconv-lite/encodings/')), []);
  assert.deepEqual(paths.filter((p) => p.startsWith('node_modules/zod/v4/locales/')), ['node_modules/zod/v4/locales/en.js']);
});

/** Loads the CLI as main.js does, in a child process, and reports what it took from node_modules and whether V8 took the cache. */
function loadInChild(dir?: string): { fromNodeModules: string[]; cacheRejected: boolean | undefined; builtins: string[] } {
  const script = `
    import { createRequire } from 'node:module';
    import vm from 'node:vm';
    const { useCompactHeap } = await import(${JSON.stringify(join(ROOT, 'build', 'server', 'memory.js'))});
    useCompactHeap();
    let rejected;
    const Script = vm.Script;
    vm.Script = class extends Script { constructor(...a) { super(...a); rejected = this.cachedDataRejected; } };
    const { loadCli } = await import(${JSON.stringify(dir ? join(dir, 'load-cli.js') : LOADER)});
    const cli = await loadCli();
    if (typeof cli.runCli !== 'function') throw new Error('no runCli');
    const loaded = Object.keys(createRequire(import.meta.url).cache).filter((f) => f.includes('/node_modules/')).map((f) => f.replace(/.*\\/node_modules\\//, ''));
    const builtins = process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice('NativeModule '.length));
    console.log(JSON.stringify({ fromNodeModules: [...new Set(loaded.map((f) => f.split('/')[0]))].sort(), cacheRejected: rejected, builtins }));
  `;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', cwd: ROOT, timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as { fromNodeModules: string[]; cacheRejected: boolean | undefined; builtins: string[] };
}

test('loading the CLI takes only better-sqlite3 from node_modules, with the build\'s code cache, and none of Node\'s modules that only later work needs', built, () => {
  const { fromNodeModules, cacheRejected, builtins } = loadInChild();
  assert.deepEqual(fromNodeModules, ['better-sqlite3']);
  // Required on first use (server/cli/bundle.mjs, lazyBuiltins), and the relay (ws, which
  // requires https and tls) only by `chyme relay`.
  assert.ok(builtins.includes('http'), 'the list is of the modules Node loaded');
  assert.deepEqual(builtins.filter((m) => ['https', 'tls', 'worker_threads', 'zlib'].includes(m)), []);
  // Under the compact heap's flags (serve's), V8 takes the cache the build made.
  assert.equal(cacheRejected, false);
});

test('a code cache that is not the bundle\'s own is never given to V8, and the CLI loads without it', built, () => {
  // Beside build/server/cli, so that ../memory.js and the checkout's node_modules are found as from there.
  const dir = mkdtempSync(join(ROOT, 'build', 'server', 'cli-cache-test-'));
  try {
    for (const f of ['load-cli.js', 'cli.cjs', 'cli.cjs.cache']) copyFileSync(join(CLI_DIR, f), join(dir, f));
    const cache = readFileSync(join(dir, 'cli.cjs.cache'));
    // Damaged: one byte of V8's data flipped.
    cache[cache.length - 100]! ^= 0xff;
    writeFileSync(join(dir, 'cli.cjs.cache'), cache);
    assert.equal(loadInChild(dir).cacheRejected, undefined, 'a damaged cache is not handed to V8');
    // Stale: a bundle of the same length with other contents (V8 itself compares only lengths).
    copyFileSync(join(CLI_DIR, 'cli.cjs.cache'), join(dir, 'cli.cjs.cache'));
    const bundle = readFileSync(join(dir, 'cli.cjs'), 'utf8');
    const changed = bundle.replace('Usage:', 'Usagf:');
    assert.notEqual(changed, bundle);
    writeFileSync(join(dir, 'cli.cjs'), changed);
    assert.equal(loadInChild(dir).cacheRejected, undefined, 'a stale cache is not handed to V8');
    // Missing: the bundle loads as well.
    rmSync(join(dir, 'cli.cjs.cache'));
    assert.equal(loadInChild(dir).cacheRejected, undefined);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/**
 * A fresh `chyme serve` on a new database with a full-scope key; `requests` makes its first
 * requests. The server must stop cleanly and print no warning or error.
 */
async function withFreshServe(requests: (url: string, headers: Record<string, string>) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'chyme-first-request-'));
  try {
    const db = join(dir, 'chyme.db');
    const created = runCli(['keys', 'create', '--name', 'first', '--scopes', 'all', '--db', db]);
    assert.equal(created.status, 0, created.stderr);
    const headers = { authorization: `Bearer ${created.stdout.trim().split('\n').at(-1)!}`, 'content-type': 'application/json' };
    const serve = await startServe(['--db', db]);
    try {
      await requests(serve.url, headers);
    } finally {
      assert.equal(await serve.stop(), 0);
    }
    assert.doesNotMatch(serve.stderr(), /warning|error/i);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('the first requests after a cold start answer as any later one: a meal, the state after it, the body checks, the MCP SDK import and a path only Express serves', built, async () => {
  await withFreshServe(async (url, headers) => {
    // First of all a write: its body is parsed by body-parser, which the start leaves unloaded.
    const eatenAt = new Date(Date.now() - 10 * 60_000).toISOString();
    const posted = await fetch(`${url}/v1/nutrition/meals`, { method: 'POST', headers, body: JSON.stringify({ timestamp: eatenAt, meal_type: 'lunch', foods: [{ name: 'soup', calories: 500 }] }) });
    assert.equal(posted.status, 201, await posted.clone().text());
    const meal = (await posted.json()) as { id: string; macros: { calories: number } };
    assert.equal(meal.macros.calories, 500);
    const state = (await (await fetch(`${url}/v1/digestion/state`, { headers })).json()) as { state: string; active_meals: number };
    assert.equal(state.state, 'processing');
    assert.equal(state.active_meals, 1);
    const got = (await (await fetch(`${url}/v1/nutrition/meals/${meal.id}`, { headers })).json()) as { id: string };
    assert.equal(got.id, meal.id);
    // The body's checks, as on any later request.
    const broken = await fetch(`${url}/v1/nutrition/meals`, { method: 'POST', headers, body: '{"timestamp":' });
    assert.equal(broken.status, 400);
    assert.equal(((await broken.json()) as { error: { code: string } }).error.code, 'invalid_json');
    const text = await fetch(`${url}/v1/nutrition/meals`, { method: 'POST', headers: { ...headers, 'content-type': 'text/plain' }, body: 'soup' });
    assert.equal(text.status, 415);
    // The MCP SDK is imported on the first /mcp request, from a function of the cached bundle.
    const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'first', version: '1' } } };
    const mcp = await fetch(`${url}/mcp`, { method: 'POST', headers: { ...headers, accept: 'application/json, text/event-stream' }, body: JSON.stringify(init) });
    assert.equal(mcp.status, 200, await mcp.clone().text());
    assert.match(await mcp.text(), /"protocolVersion"/);
    // An unknown path goes to Express, which the start leaves unloaded too.
    const unknown = await fetch(`${url}/v1/no-such-thing`, { headers });
    assert.equal(unknown.status, 404);
    assert.equal(((await unknown.json()) as { error: { code: string } }).error.code, 'resource_missing');
  });
});

test('the first requests whose schemas are built on first use (z.lazy) answer as later ones: a webhook subscription, an import, a custom food, MCP\'s tools and the OpenAPI document', built, async () => {
  await withFreshServe(async (url, headers) => {
    const post = (path: string, body: unknown) => fetch(`${url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
    const errorOf = async (r: Response) => ((await r.json()) as { error: { code: string; param?: string; message: string } }).error;
    // The very first request: a refused subscription, with its field's own sentence.
    const refused = await post('/v1/webhooks', { url: 'ftp://127.0.0.1/x', events: ['meal.created'] });
    assert.equal(refused.status, 400);
    const why = await errorOf(refused);
    assert.deepEqual([why.code, why.param], ['parameter_invalid', 'url']);
    assert.match(why.message, /http or https/);
    const subscribed = await post('/v1/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['meal.created', 'meal.created'] });
    assert.equal(subscribed.status, 201, await subscribed.clone().text());
    assert.deepEqual(((await subscribed.json()) as { events: string[] }).events, ['meal.created']);
    // An export read back: its document's schema, refused then accepted.
    const wrongFormat = await post('/v1/import', { format: 'other', format_version: 1 });
    assert.equal(wrongFormat.status, 400);
    assert.equal((await errorOf(wrongFormat)).param, 'format');
    const doc = { format: 'chyme.export', format_version: 1, meals: [{ id: 'meal_first1', timestamp: '2026-11-20T08:00:00Z', meal_type: 'lunch', macros: { calories: 300 } }] };
    const imported = await post('/v1/import', doc);
    assert.equal(imported.status, 200, await imported.clone().text());
    assert.equal(((await imported.json()) as { meals: { imported: number } }).meals.imported, 1);
    // A custom food given per serving (its own lazily built part of the schema).
    const food = await post('/v1/foods', { name: 'Oat bar', per_serving: { grams: 40, nutrients: { calories: 160 } } });
    assert.equal(food.status, 201, await food.clone().text());
    assert.equal(((await food.json()) as { nutrients: { calories: number } }).nutrients.calories, 400);
    // MCP's tools, built on its first request.
    const mcpHeaders = { ...headers, accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };
    const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'first', version: '1' } } };
    const opened = await fetch(`${url}/mcp`, { method: 'POST', headers: mcpHeaders, body: JSON.stringify(init) });
    assert.equal(opened.status, 200, await opened.clone().text());
    await opened.text();
    const session = opened.headers.get('mcp-session-id');
    const sessionHeaders = { ...mcpHeaders, ...(session ? { 'mcp-session-id': session } : {}) };
    await (await fetch(`${url}/mcp`, { method: 'POST', headers: sessionHeaders, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) })).text();
    const listed = await fetch(`${url}/mcp`, { method: 'POST', headers: sessionHeaders, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }) });
    assert.equal(listed.status, 200);
    const tools = /"tools":\[.*\]/s.exec(await listed.text());
    assert.ok(tools, 'tools/list answers with its tools');
    assert.match(tools[0], /"name":"search_foods"/);
    assert.match(tools[0], /"name":"log_meal"/);
    // The OpenAPI document, with what the lazy schemas name.
    const openapi = (await (await fetch(`${url}/v1/openapi.json`)).json()) as {
      components: { schemas: Record<string, unknown> };
      webhooks: Record<string, unknown>;
      paths: Record<string, { post?: { requestBody?: { content: Record<string, { schema: { properties: { timezone: { enum: string[] } } } }> } } }>;
    };
    for (const id of ['Food', 'FoodCreate', 'ImportDocument', 'Meal', 'WebhookCreate', 'Sync', 'Settings', 'DigestiveState']) assert.ok(openapi.components.schemas[id], `components.schemas.${id}`);
    assert.ok(openapi.webhooks['meal.created'], 'the webhook payloads are documented');
    assert.ok(openapi.paths['/v1/imports']!.post!.requestBody!.content['multipart/form-data']!.schema.properties.timezone.enum.includes('Europe/Berlin'));
  });
});
