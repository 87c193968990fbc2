import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CLI, runCli, startServe } from '../helpers/cli.js';
import { TOOL_TABLE } from './helpers.js';

const tempDb = () => join(mkdtempSync(join(tmpdir(), 'chyme-mcp-')), 'chyme.db');

/** `chyme mcp` started by the SDK's own stdio client, as Claude Desktop or VS Code start it. */
async function stdioClient(args: string[], env: Record<string, string>): Promise<{ client: Client; stderr: () => string }> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', ...args], env: { ...(process.env as Record<string, string>), ...env }, stderr: 'pipe' });
  let err = '';
  transport.stderr?.on('data', (c: Buffer) => (err += c.toString()));
  const client = new Client({ name: 'chyme-stdio-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, stderr: () => err };
}

function createKey(db: string, scopes: string): string {
  const created = runCli(['keys', 'create', '--name', 'assistant', '--scopes', scopes, '--db', db]);
  assert.equal(created.status, 0, created.stderr);
  return created.stdout.trim().split('\n').at(-1)!;
}

describe('chyme mcp (stdio)', () => {
  test('a stdio client against a running service: finds it through --db, lists the tools, logs a meal the service stores', async () => {
    const db = tempDb();
    const serve = await startServe(['--db', db]);
    try {
      const key = createKey(db, 'nutrition:read,nutrition:write,digestion:read,sleep:write');
      const { client, stderr } = await stdioClient(['--db', db], { CHYME_API_KEY: key });
      try {
        const { tools } = await client.listTools();
        assert.deepEqual(tools.map((x) => x.name).sort(), Object.keys(TOOL_TABLE).sort());
        const found = await client.callTool({ name: 'search_foods', arguments: { query: 'rice cooked', limit: 1 } });
        const rice = (found.structuredContent as { data: Array<{ id: string; nutrients: { calories: number } }> }).data[0]!;
        const logged = await client.callTool({
          name: 'log_meal',
          arguments: { description: 'burrito bowl', foods: [{ food_id: rice.id, quantity: 200, unit: 'g' }, { name: 'coffee', calories: 5 }], idempotency_key: 'bowl-1' },
        });
        assert.equal(logged.isError, undefined);
        const meal = logged.structuredContent as { id: string; macros: { calories: number } };
        assert.equal(meal.macros.calories, Math.round(rice.nutrients.calories * 2 * 100) / 100 + 5);
        const rest = await fetch(`${serve.url}/v1/nutrition/meals/${meal.id}`, { headers: { authorization: `Bearer ${key}` } });
        assert.deepEqual(await rest.json(), meal);
        const state = await client.callTool({ name: 'get_digestive_state', arguments: {} });
        assert.equal((state.structuredContent as { state: string }).state, 'processing');
        const refused = await client.callTool({ name: 'log_meal', arguments: { macros: { calories: -1 } } });
        assert.equal(refused.isError, true);
        assert.equal(stderr(), '', 'nothing to say on stderr while all is well');
      } finally {
        await client.close();
      }
      // A key the service does not know is said at once, before any client waits on it.
      const refused = runCli(['mcp', '--url', serve.url, '--key', 'chy_notAKeyThisServiceKnows000000000']);
      assert.equal(refused.status, 6);
      assert.equal(refused.stdout, '');
      assert.match(refused.stderr, /^chyme: Chyme at .* does not accept this API key/);
      // --url and --key reach the same service.
      const { client: byUrl } = await stdioClient(['--url', serve.url, '--key', key], {});
      try {
        const listed = await byUrl.callTool({ name: 'list_meals', arguments: {} });
        assert.equal((listed.structuredContent as { data: unknown[] }).data.length, 1);
      } finally {
        await byUrl.close();
      }
    } finally {
      await serve.stop();
    }
  });

  test('with no service running it says so in one sentence on stderr, writes nothing on stdout, and exits non-zero', async () => {
    const db = tempDb();
    // A database that exists, whose service is not running.
    const key = createKey(db, 'nutrition:read');
    for (const args of [['--db', db], ['--url', 'http://127.0.0.1:9']]) {
      const child = spawn(process.execPath, [CLI, 'mcp', ...args], { env: { ...process.env, CHYME_API_KEY: key }, stdio: ['pipe', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout.on('data', (c) => (out += c));
      child.stderr.on('data', (c) => (err += c));
      const [code] = (await once(child, 'exit')) as [number];
      assert.notEqual(code, 0);
      assert.equal(out, '');
      assert.equal(err.trim().split('\n').length, 1, err);
      assert.match(err, /^chyme: No Chyme is running/);
    }
    const noKey = runCli(['mcp', '--db', db], { CHYME_API_KEY: '' });
    assert.notEqual(noKey.status, 0);
    assert.equal(noKey.stdout, '');
    assert.match(noKey.stderr, /No API key/);
  });
});
