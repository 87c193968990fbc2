/**
 * Home Assistant discovery against a real Mosquitto broker (password file, anonymous off, a TLS
 * listener with an openssl certificate): the configs, the states following /v1, commands, prefix
 * changes, Home Assistant's restart, a refused login, TLS with a pinned certificate, and a broker
 * that goes away and comes back.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { startBroker, watch, mosquittoAvailable, type Broker } from '../helpers/mosquitto.js';
import { startTestService, TEST_NOW, type TestService } from '../helpers/service.js';

const skip = mosquittoAvailable() ? false : 'needs Debian\'s mosquitto (apt-get install mosquitto); .ci/run installs it';

/** What Home Assistant's MQTT sensor, button and text platforms require of a discovery config. */
function assertValidConfig(topic: string, c: Record<string, any>): void {
  const component = topic.split('/').at(-4)!;
  assert.ok(['sensor', 'button', 'text'].includes(component), `component ${component}`);
  assert.equal(typeof c.name, 'string', `${topic}: name`);
  assert.match(c.unique_id, /^chyme_user_[A-Za-z0-9]+_[a-z0-9_]+$/, `${topic}: unique_id`);
  assert.ok(Array.isArray(c.availability) && c.availability[0].topic, `${topic}: availability`);
  assert.deepEqual(Object.keys(c.device).sort(), ['configuration_url', 'identifiers', 'manufacturer', 'model', 'name', 'sw_version'].sort());
  assert.equal(c.device.name, 'Chyme');
  if (component === 'sensor') {
    assert.equal(typeof c.state_topic, 'string');
    assert.equal(typeof c.value_template, 'string');
    if (c.device_class === 'enum') assert.ok(Array.isArray(c.options) && c.options.length > 0);
    if (c.state_class) assert.ok(['measurement', 'total', 'total_increasing'].includes(c.state_class));
    if (c.state_class === 'total') assert.equal(typeof c.last_reset_value_template, 'string');
    if (c.device_class) assert.ok(['enum', 'timestamp'].includes(c.device_class));
  } else {
    assert.equal(typeof c.command_topic, 'string', `${topic}: command_topic`);
  }
}

const meal = (description: string, calories: number, at = TEST_NOW - 3600_000) => ({
  timestamp: new Date(at).toISOString(),
  meal_type: 'lunch',
  description,
  macros: { calories },
});

describe('MQTT with Home Assistant discovery (real Mosquitto)', { skip }, () => {
  let broker: Broker;
  let t: TestService;
  before(async () => {
    broker = await startBroker();
  });
  after(async () => {
    await broker?.close();
  });
  afterEach(async () => {
    await t?.stop();
  });

  async function serviceWithMqtt(extra: Record<string, unknown> = {}) {
    t = await startTestService({ mqtt: { reconnectFirstMs: 100, reconnectMaxMs: 1000 } });
    const res = await t.request('PATCH', '/v1/integrations/mqtt', {
      body: { enabled: true, broker_url: broker.url, username: broker.user, password: broker.password, ...extra },
    });
    assert.equal(res.status, 200, res.text);
    return res.body;
  }

  async function waitConnected() {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const s = await t.request('GET', '/v1/integrations/mqtt');
      if (s.body.status === 'connected') return s.body;
      if (Date.now() > deadline) throw new Error(`not connected: ${JSON.stringify(s.body)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  test('off until configured; the password is write-only; bad settings are refused by name', async () => {
    t = await startTestService();
    const off = await t.request('GET', '/v1/integrations/mqtt');
    assert.equal(off.status, 200);
    assert.equal(off.body.status, 'disabled');
    assert.equal(off.body.discovery_prefix, 'homeassistant');
    assert.equal(off.body.topic_prefix, 'chyme');
    assert.equal(off.body.commands_enabled, false);
    assert.equal(off.body.has_password, false);
    for (const [body, param] of [
      [{ enabled: true }, 'broker_url'],
      [{ broker_url: 'http://x:1883' }, 'broker_url'],
      [{ broker_url: 'mqtt://_òæ:1883' }, 'broker_url'],
      [{ broker_url: 'mqtt://user:pw@host' }, 'broker_url'],
      [{ discovery_prefix: 'home/#' }, 'discovery_prefix'],
      [{ topic_prefix: '' }, 'topic_prefix'],
      [{ bogus: 1 }, 'bogus'],
    ] as const) {
      const r = await t.request('PATCH', '/v1/integrations/mqtt', { body });
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.body.error.param, param, `${JSON.stringify(body)}: ${r.text}`);
    }
    const set = await t.request('PATCH', '/v1/integrations/mqtt', { body: { broker_url: broker.url, username: 'u', password: 'p4ss-w0rd' } });
    assert.equal(set.status, 200);
    assert.equal(set.body.has_password, true);
    assert.ok(!set.text.includes('p4ss-w0rd'), 'the password is never in an answer');
    const exported = await t.request('GET', '/v1/export');
    assert.ok(!exported.text.includes('p4ss-w0rd'), 'nor in an export');
    const readOnly = await t.request('GET', '/v1/integrations/mqtt', { key: t.keyWith('digestion:read', 'nutrition:read') });
    assert.equal(readOnly.status, 403, 'admin scope');
  });

  test('every entity is announced, valid for Home Assistant, with availability online; states equal /v1', async () => {
    const sub = await broker.client();
    const seen = await watch(sub, '#');
    await serviceWithMqtt();
    await waitConnected();
    await t.request('POST', '/v1/nutrition/meals', { body: meal('Lentil soup', 520) });
    const configs = await seen.until(() => {
      const c = [...seen.latest].filter(([k, v]) => k.startsWith('homeassistant/') && k.endsWith('/config') && v);
      return c.length >= 7 && c;
    }, 'seven sensor configs');
    const ids = new Set<string>();
    for (const [topic, text] of configs) {
      const c = JSON.parse(text);
      assertValidConfig(topic, c);
      ids.add(c.unique_id.replace(/^chyme_user_[A-Za-z0-9]+_/, ''));
    }
    for (const e of ['digestive_state', 'gut_score', 'overnight_score', 'calories_today', 'last_meal', 'ready_for_sleep', 'fasting_since']) {
      assert.ok(ids.has(e), e);
    }
    const state = JSON.parse(configs.find(([k]) => k.includes('/digestive_state/'))![1]);
    assert.deepEqual(state.options.sort(), ['fasted', 'processing', 'settling']);
    assert.equal(seen.latest.get('chyme/availability'), 'online');
    // The payloads are the /v1 resources.
    await seen.until(() => JSON.parse(seen.latest.get('chyme/calories_today') || '{}').calories === 520, 'calories 520');
    const apiState = await t.request('GET', '/v1/digestion/state');
    const mqttState = JSON.parse(seen.latest.get('chyme/state')!);
    assert.equal(mqttState.state, apiState.body.state);
    assert.equal(mqttState.next_change_at, apiState.body.next_change_at);
    const last = JSON.parse(seen.latest.get('chyme/last_meal')!);
    assert.equal(last.description, 'Lentil soup');
    const windows = await t.request('GET', '/v1/digestion/windows');
    assert.equal(JSON.parse(seen.latest.get('chyme/windows')!).sleep_ready_at, windows.body.sleep_ready_at);
  });

  test('a meal logged over REST reaches calories and last meal; a deleted one leaves them', async () => {
    const sub = await broker.client();
    const seen = await watch(sub, 'chyme/#');
    await serviceWithMqtt();
    await waitConnected();
    const sent = Date.now();
    const created = await t.request('POST', '/v1/nutrition/meals', { body: meal('Toast', 210, TEST_NOW - 600_000) });
    await seen.until(() => JSON.parse(seen.latest.get('chyme/calories_today') || '{}').calories === 210, 'calories 210');
    await seen.until(() => JSON.parse(seen.latest.get('chyme/last_meal') || '{}').id === created.body.id, 'last meal');
    console.log(`# meal write → calories and last-meal topics: ${Date.now() - sent} ms`);
    await t.request('DELETE', `/v1/nutrition/meals/${created.body.id}`);
    await seen.until(() => JSON.parse(seen.latest.get('chyme/calories_today') || '{}').calories === 0, 'calories 0');
    // {} (not an empty payload, which would leave Home Assistant showing the deleted meal): unknown.
    await seen.until(() => seen.latest.get('chyme/last_meal') === '{}', 'no last meal');
  });

  test('commands: a saved-meal button logs exactly one meal when pressed twice; text logs a meal; malformed changes nothing', async () => {
    await serviceWithMqtt({ commands_enabled: true });
    const saved = await t.request('POST', '/v1/nutrition/saved_meals', { body: { name: 'Usual breakfast', meal_type: 'breakfast', foods: [{ name: 'Oats', calories: 300 }] } });
    assert.equal(saved.status, 201, saved.text);
    // Without a meal type, a press takes the one the time of day suggests (12:00 in Berlin… 13:00: lunch).
    const untyped = await t.request('POST', '/v1/nutrition/saved_meals', { body: { name: 'Smoothie', foods: [{ name: 'Smoothie', calories: 180 }] } });
    assert.equal(untyped.status, 201, untyped.text);
    const sub = await broker.client();
    const seen = await watch(sub, 'homeassistant/#');
    await waitConnected();
    const button = await seen.until(() => [...seen.latest].find(([k, v]) => k.startsWith('homeassistant/button/') && v.includes('Usual breakfast')), 'the button config');
    const cfg = JSON.parse(button[1]);
    assert.equal(cfg.name, 'Log Usual breakfast');
    assert.equal(cfg.payload_press, saved.body.id);
    const text = await seen.until(() => [...seen.latest].find(([k, v]) => k.startsWith('homeassistant/text/') && v), 'the text config');
    const textCfg = JSON.parse(text[1]);
    // Home Assistant refuses in the text box what Chyme would refuse.
    const pattern = new RegExp(textCfg.pattern, 'v');
    assert.ok(pattern.test('Banana, 105 kcal') && !pattern.test('Cake, 99999 kcal') && !pattern.test('Toast 123456'));
    // What became of each command is an event entity: refusals show in Home Assistant, not only in Chyme's log.
    const event = await seen.until(() => [...seen.latest].find(([k, v]) => k.startsWith('homeassistant/event/') && v), 'the event config');
    const eventCfg = JSON.parse(event[1]);
    assert.deepEqual([eventCfg.name, eventCfg.state_topic, eventCfg.event_types], ['Meal command', 'chyme/command_result', ['logged', 'refused']]);
    const results = await watch(sub, 'chyme/command_result');

    const created: string[] = [];
    const off = t.service.app.bus.subscribe((e) => e.type === 'meal.created' && created.push(e.id));
    try {
      await sub.publishAsync(cfg.command_topic, cfg.payload_press, { qos: 1 });
      await sub.publishAsync(cfg.command_topic, cfg.payload_press, { qos: 1 });
      for (const bad of ['', 'smeal_nope!', '{"description": 5}', 'no calories here', 'Cake, 99999 kcal']) await sub.publishAsync(textCfg.command_topic, bad, { qos: 1 });
      // Published with retain: live subscribers get it once as a press; the retained copy the broker
      // hands over at every later connection is never taken as another (checked below).
      await sub.publishAsync(textCfg.command_topic, 'Retained cake, 300 kcal', { qos: 1, retain: true });
      await sub.publishAsync(textCfg.command_topic, 'Banana, 105 kcal', { qos: 1 });
      await sub.publishAsync(cfg.command_topic, untyped.body.id, { qos: 1 });
      const deadline = Date.now() + 20_000;
      while (created.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      // A round trip through the broker after the last command: everything before it was handled.
      await sub.publishAsync('chyme/command/log_meal', 'Sentinel apple; 1', { qos: 1 });
      while (created.length < 5 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      // Past the repeat window, reconnect: the broker sends the retained command again, flagged retained.
      t.clock.advance(5 * 60_000);
      await t.service.mqtt.pause!();
      t.service.mqtt.resume!();
      await waitConnected();
      await sub.publishAsync('chyme/command/log_meal', 'Second sentinel; 2', { qos: 1 });
      while (created.length < 6 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      await sub.publishAsync(textCfg.command_topic, '', { qos: 1, retain: true }); // clears the retained one
    } finally {
      off();
    }
    const meals = (await t.request('GET', '/v1/nutrition/meals?start_date=2026-11-01&end_date=2026-11-30&limit=100')).body.data.map((m: any) => `${m.description}:${m.macros.calories}:${m.meal_type}:${m.source}`).sort();
    assert.deepEqual(meals, [
      'Banana:105:lunch:mqtt',
      'Retained cake:300:lunch:mqtt',
      'Second sentinel:2:lunch:mqtt',
      'Sentinel apple:1:lunch:mqtt',
      'Smoothie:180:lunch:mqtt',
      'Usual breakfast:300:breakfast:mqtt',
    ]);
    assert.equal(created.length, 6, 'events (and so webhooks) for each meal logged');
    const outcomes = results.all.map((m) => JSON.parse(m.payload) as { event_type: string; command: string; reason?: string; description?: string });
    assert.ok(results.all.every((m) => !m.retain), 'results are events, never retained');
    assert.equal(outcomes.filter((o) => o.event_type === 'logged').length, 6);
    const reasons = outcomes.filter((o) => o.event_type === 'refused').map((o) => `${o.command}: ${o.reason}`);
    for (const expected of [
      /^log_saved_meal: the same saved meal was logged less than 60 s ago$/,
      /^log_meal: the payload is empty$/,
      /^log_meal: expected "Description, 450 kcal"$/,
      /^log_meal: the description is missing$/,
      /^log_meal: calories must be a number from 0 to 10000$/,
      /^log_meal: the command was published with retain/,
    ]) {
      assert.ok(reasons.some((r) => expected.test(r)), `${expected}: ${reasons.join(' | ')}`);
    }
  });

  test('commands are not listened to unless enabled', async () => {
    await serviceWithMqtt();
    await waitConnected();
    const sub = await broker.client();
    await sub.publishAsync('chyme/command/log_meal', 'Cake, 400 kcal', { qos: 1 });
    // Enabling commands (re)subscribes; a retained-free command sent before is not replayed.
    await t.request('PATCH', '/v1/integrations/mqtt', { body: { commands_enabled: true } });
    await waitConnected();
    await sub.publishAsync('chyme/command/log_meal', 'Pear, 60 kcal', { qos: 1 });
    const deadline = Date.now() + 20_000;
    let meals: string[] = [];
    while (Date.now() < deadline) {
      meals = (await t.request('GET', '/v1/nutrition/meals?start_date=2026-11-01&end_date=2026-11-30')).body.data.map((m: any) => m.description);
      if (meals.length) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.deepEqual(meals, ['Pear']);
  });

  test('Home Assistant restarting (status online) gets everything again; changed prefixes remove the old configs', async () => {
    await serviceWithMqtt();
    await waitConnected();
    const sub = await broker.client();
    const seen = await watch(sub, '#');
    await seen.until(() => seen.latest.get('chyme/availability') === 'online', 'retained availability');
    const before = seen.all.length;
    await sub.publishAsync('homeassistant/status', 'online');
    await seen.until(() => seen.all.slice(before).filter((m) => m.topic.endsWith('/config') && !m.retain).length >= 7, 'configs sent again');

    // This installation's configs (earlier tests' services left theirs, as a stopped Chyme should).
    const node = `chyme_${(await t.request('GET', '/v1/snapshot?include=state')).body.user.id}`;
    const oldConfigs = [...seen.latest.keys()].filter((k) => k.startsWith('homeassistant/') && k.includes(`/${node}/`) && k.endsWith('/config'));
    assert.ok(oldConfigs.length >= 7);
    const changed = await t.request('PATCH', '/v1/integrations/mqtt', { body: { discovery_prefix: 'ha2', topic_prefix: 'gut' } });
    assert.equal(changed.status, 200);
    await waitConnected();
    await seen.until(() => oldConfigs.every((k) => seen.latest.get(k) === ''), 'old configs removed');
    await seen.until(() => [...seen.latest].filter(([k, v]) => k.startsWith('ha2/sensor/') && v).length >= 7, 'new configs');
    const one = JSON.parse([...seen.latest].find(([k, v]) => k.startsWith('ha2/sensor/') && v)![1]);
    assert.ok(one.unique_id.startsWith(node), 'the same entities, moved');
    assert.ok(one.state_topic.startsWith('gut/'));
    assert.equal(seen.latest.get('gut/availability'), 'online');
    // A fresh subscriber sees no retained config under the old prefix.
    const fresh = await broker.client();
    const retained = await watch(fresh, `homeassistant/+/${node}/#`);
    const marker = await watch(fresh, 'ha2/#');
    await marker.until(() => marker.latest.size >= 7, 'the retained configs under the new prefix');
    assert.deepEqual([...retained.latest].filter(([, v]) => v), []);
  });

  test('a refused login is an error status with a sentence, and no retry storm', async () => {
    t = await startTestService({ mqtt: { reconnectFirstMs: 50, reconnectMaxMs: 100 } });
    await t.request('PATCH', '/v1/integrations/mqtt', { body: { enabled: true, broker_url: broker.url, username: broker.user, password: 'wrong' } });
    const deadline = Date.now() + 20_000;
    let s;
    do {
      s = (await t.request('GET', '/v1/integrations/mqtt')).body;
      if (s.status === 'error') break;
      await new Promise((r) => setTimeout(r, 50));
    } while (Date.now() < deadline);
    assert.equal(s.status, 'error');
    assert.match(s.last_error, /the broker refused the user name or password/);
    const attempts = () => (broker.log().match(/not authorised|bad user name or password/gi) ?? []).length;
    const first = attempts();
    await new Promise((r) => setTimeout(r, 1000)); // ten times the backoff cap of this test
    assert.ok(attempts() <= first + 0, `no further attempts (${first} → ${attempts()})`);
    // The test endpoint says the same without storing anything; the right password connects.
    const tried = await t.request('POST', '/v1/integrations/mqtt/test', { body: { password: 'still-wrong' } });
    assert.equal(tried.body.ok, false);
    assert.match(tried.body.error, /user name or password/);
    await t.request('PATCH', '/v1/integrations/mqtt', { body: { password: broker.password } });
    await waitConnected();
  });

  test('mqtts: an unpinned self-signed broker is refused naming its fingerprint; pinned, it connects', async () => {
    t = await startTestService({ mqtt: { reconnectFirstMs: 100, reconnectMaxMs: 500 } });
    const probe = await t.request('POST', '/v1/integrations/mqtt/test', { body: { broker_url: broker.tlsUrl, username: broker.user, password: broker.password } });
    assert.equal(probe.body.ok, false);
    assert.match(probe.body.error, /self-signed/);
    assert.equal(probe.body.tls_certificate_sha256, broker.tlsSha256);
    await t.request('PATCH', '/v1/integrations/mqtt', {
      body: { enabled: true, broker_url: broker.tlsUrl, username: broker.user, password: broker.password, tls_certificate_sha256: broker.tlsSha256 },
    });
    const s = await waitConnected();
    assert.equal(s.tls_certificate_sha256, broker.tlsSha256);
  });

  test('MQTT over WebSocket (ws://) works the same', async () => {
    await serviceWithMqtt({ broker_url: broker.wsUrl });
    await waitConnected();
    const sub = await broker.client();
    const seen = await watch(sub, 'chyme/availability');
    await seen.until(() => seen.latest.get('chyme/availability') === 'online', 'online over ws://');
  });

  test('a broker that goes away: the API is not slowed, the client reconnects and republishes', async () => {
    await serviceWithMqtt();
    await waitConnected();
    await broker.stop();
    const down = Date.now();
    for (;;) {
      const s = (await t.request('GET', '/v1/integrations/mqtt')).body;
      if (s.status === 'connecting') break;
      if (Date.now() - down > 20_000) throw new Error('status did not leave connected');
      await new Promise((r) => setTimeout(r, 50));
    }
    // Writes while the broker is gone succeed as ever.
    for (let i = 0; i < 5; i++) assert.equal((await t.request('POST', '/v1/nutrition/meals', { body: meal(`while down ${i}`, 100) })).status, 201);
    await broker.start();
    await waitConnected();
    const sub = await broker.client();
    const seen = await watch(sub, 'chyme/#');
    await seen.until(() => JSON.parse(seen.latest.get('chyme/calories_today') || '{}').calories === 500, 'states republished after the outage');
    assert.equal(seen.latest.get('chyme/availability'), 'online');
  });
});
