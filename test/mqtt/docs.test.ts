import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import type { AppContext } from '../../server/app-context.js';
import type { MqttConfig } from '../../server/mqtt/config.js';
import { discoveryConfigs } from '../../server/mqtt/entities.js';

/** The attributes column of docs/home-assistant.md's entity table, per entity id: the backticked names. */
function documentedAttributes(): Map<string, string[]> {
  const doc = readFileSync(new URL('../../docs/home-assistant.md', import.meta.url), 'utf8');
  const out = new Map<string, string[]>();
  for (const line of doc.split('\n')) {
    const cells = line.split(' | ');
    const entity = /^\| `sensor\.chyme_([a-z_]+)`$/.exec(cells[0] ?? '')?.[1];
    if (!entity || cells.length < 4) continue;
    // "(not `minutes_remaining` …)" names what is left out.
    const attributes = cells[3]!.replace(/\(not .*?\)/g, '');
    out.set(entity, [...attributes.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!).sort());
  }
  return out;
}

test('each sensor\'s attributes are the ones docs/home-assistant.md lists for it', () => {
  const config = { discoveryPrefix: 'homeassistant', topicPrefix: 'chyme', commandsEnabled: false } as MqttConfig;
  // Without commands the configs read nothing from the database.
  const configs = discoveryConfigs({} as AppContext, config, { installId: 'user_x', version: '0', configurationUrl: undefined });
  const sent = new Map(
    configs.map((c) => [
      /\/sensor\/[^/]+\/([a-z_]+)\/config$/.exec(c.topic)?.[1] ?? c.topic,
      [...String(c.payload.json_attributes_template ?? '').matchAll(/"([a-z_]+)":/g)].map((m) => m[1]!).sort(),
    ]),
  );
  const documented = documentedAttributes();
  assert.deepEqual([...documented.keys()].sort(), [...sent.keys()].sort(), 'every sensor is in the table');
  for (const [entity, attributes] of documented) assert.deepEqual(sent.get(entity), attributes, entity);
});
