/**
 * Availability through the broker's last will, with `chyme serve` as a real process and a real
 * Mosquitto: kill -9 of the service shows as offline, a restart as online again, a clean stop
 * says offline itself. The settings survive the restart (they are in the database).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli, startServe } from '../helpers/cli.js';
import { mosquittoAvailable, startBroker, watch, type Broker } from '../helpers/mosquitto.js';

const skip = mosquittoAvailable() ? false : 'needs Debian\'s mosquitto (apt-get install mosquitto); .ci/run installs it';
let broker: Broker;
const dir = mkdtempSync(join(tmpdir(), 'chyme-mqtt-'));
before(async () => {
  if (!skip) broker = await startBroker();
});
after(async () => {
  await broker?.close();
  rmSync(dir, { recursive: true, force: true });
});

test('kill -9 gives offline through the last will; a restart gives online; a clean stop says offline', { skip, timeout: 120_000 }, async () => {
  const dbPath = join(dir, 'chyme.db');
  const key = runCli(['keys', 'create', '--name', 'ha', '--scopes', 'all', '--db', dbPath]).stdout.trim().split('\n').at(-1)!;
  let serve = await startServe(['--db', dbPath, '--tz', 'UTC']);
  const sub = await broker.client();
  const seen = await watch(sub, 'chyme/availability');
  try {
    const res = await fetch(`${serve.url}/v1/integrations/mqtt`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ enabled: true, broker_url: broker.url, username: broker.user, password: broker.password }),
    });
    assert.equal(res.status, 200, await res.text());
    await seen.until(() => seen.latest.get('chyme/availability') === 'online', 'online');

    await serve.stop('SIGKILL');
    await seen.until(() => seen.latest.get('chyme/availability') === 'offline', 'offline through the last will');

    serve = await startServe(['--db', dbPath, '--tz', 'UTC']);
    await seen.until(() => seen.latest.get('chyme/availability') === 'online', 'online after the restart');

    const before = seen.all.length;
    assert.equal(await serve.stop(), 0);
    await seen.until(() => seen.all.slice(before).some((m) => m.payload === 'offline'), 'offline on a clean stop');
    assert.equal(seen.latest.get('chyme/availability'), 'offline');
  } finally {
    await serve.stop('SIGKILL');
  }
});
