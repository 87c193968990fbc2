import type { Socket } from 'node:net';
import type { IClientOptions, MqttClient } from 'mqtt';
import type { AppContext, Subsystem } from '../app-context.js';
import { readServiceState, writeServiceState } from '../db/service-state.js';
import { currentSettings } from '../settings.js';
import { verifiedTlsConnection } from '../webhooks/tls-pin.js';
import { createCommandHandler, type CommandOutcome } from './commands.js';
import { applyMqttUpdate, readMqttConfig, writeMqttConfig, type MqttConfig, type MqttStatus, type MqttUpdate } from './config.js';
import { discoveryConfigs, statePayloads, stateFingerprint, topicsFor } from './entities.js';

/**
 * The MQTT client: connects to the person's broker (Home Assistant's Mosquitto), announces the
 * "Chyme" device through discovery, keeps the state topics equal to /v1, and, when allowed, takes
 * meal commands. It never stands in the way of the API: every broker fault (down at start, gone,
 * refusing the login) is a status and a reconnect with backoff, nothing more.
 */

/** Reconnect delays: 1, 2, 4, 8, 16, then every 30 s (issue 21: capped at 30 s). */
export const RECONNECT_MAX_MS = 30_000;
const RECONNECT_FIRST_MS = 1000;
/** How long a connection attempt (TCP, TLS and the CONNACK) may take. */
const CONNECT_TIMEOUT_MS = 10_000;
/** Writes that come in a burst (an import, a day's meals) are published once, this long after. */
const PUBLISH_DEBOUNCE_MS = 100;
/** A safety net for changes no event announces (a saved meal renamed, the day turning). */
const REFRESH_INTERVAL_MS = 60_000;
/** The discovery topics last published, so renamed prefixes or removed buttons can be cleared. */
const PUBLISHED_KEY = 'mqtt_published_configs';

export interface MqttOptions {
  /** The app's address, for the device's "Visit" link in Home Assistant. */
  serviceUrl: () => string | undefined;
  /** Backoff base (tests shorten it); the cap stays RECONNECT_MAX_MS unless given. */
  reconnectFirstMs?: number;
  reconnectMaxMs?: number;
}

export interface MqttTestResult {
  ok: boolean;
  error: string | null;
  /** The broker's certificate (mqtts://), so the person can pin a self-signed one. */
  tlsCertificateSha256: string | null;
}

export interface MqttSubsystem extends Subsystem {
  config(): MqttConfig;
  status(): MqttStatus;
  /** Stores a change and reconnects as needed (clearing retained configs under old prefixes). */
  update(body: MqttUpdate): Promise<MqttConfig>;
  /** Tries a connection with the stored settings and a change, without storing anything. */
  test(body: MqttUpdate): Promise<MqttTestResult>;
}

/** MQTT CONNACK refusals (3.1.1 return codes and their MQTT 5 reason codes) in words. */
function connackSentence(code: number): string | undefined {
  // Mosquitto answers a wrong password with "not authorised" (5), others with "bad user name or password" (4).
  if (code === 4 || code === 134) return 'the broker refused the user name or password';
  if (code === 5 || code === 135) return 'the broker refused the user name or password (not authorised)';
  if (code === 2 || code === 133) return 'the broker refused the client id';
  if (code === 3 || code === 136) return 'the broker is unavailable';
  if (code === 1 || code === 132) return 'the broker does not speak MQTT 3.1.1';
  return undefined;
}

/** A login the broker refused: trying again with the same settings would only be refused again. */
function isLoginRefusal(code: unknown): boolean {
  return code === 4 || code === 5 || code === 134 || code === 135;
}

/** Any error of a connection attempt, as one sentence for the status and the log. */
export function errorSentence(err: unknown, brokerUrl: string): string {
  const e = err as { code?: unknown; message?: string; name?: string };
  if (typeof e.code === 'number') return connackSentence(e.code) ?? `the broker refused the connection (code ${e.code})`;
  const where = (() => {
    try {
      const u = new URL(brokerUrl);
      return `${u.hostname}:${u.port || defaultPort(u.protocol)}`;
    } catch {
      return brokerUrl;
    }
  })();
  if (e.code === 'ECONNREFUSED') return `the broker refused the connection: nothing listens at ${where}`;
  if (e.code === 'ENOTFOUND' || e.code === 'EAI_AGAIN') return `the broker's host name could not be found (${where})`;
  if (e.code === 'ETIMEDOUT' || /timeout/i.test(e.message ?? '')) return `the broker did not answer within ${CONNECT_TIMEOUT_MS / 1000} s (${where})`;
  if (e.code === 'ECONNRESET' || e.code === 'EPIPE') return 'the broker closed the connection';
  if (e.code === 'EHOSTUNREACH' || e.code === 'ENETUNREACH') return `the broker's network cannot be reached (${where})`;
  if (e.name === 'CertificateRefusedError') return String(e.message);
  return `the connection failed: ${e.message ?? String(err)}`;
}

function defaultPort(protocol: string): string {
  return { 'mqtt:': '1883', 'mqtts:': '8883', 'ws:': '80', 'wss:': '443' }[protocol] ?? '';
}

/** mqtts:// through the same verified TLS as webhooks: no byte (no password) before the broker is trusted. */
function verifiedTlsSocket(url: URL, pinSha256: string | null, onPeer: (sha256: string) => void): Promise<Socket> {
  const connect = verifiedTlsConnection({
    pinSha256,
    onPeerCertificate: onPeer,
    peer: 'broker',
    howToPin: 'set tls_certificate_sha256 in the MQTT settings (or use "Trust this certificate" in the app) to trust exactly this certificate',
    alpn: [],
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(Object.assign(new Error('TLS handshake timeout'), { code: 'ETIMEDOUT' })), CONNECT_TIMEOUT_MS);
    connect({ host: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port || 8883) }, (err, socket) => {
      clearTimeout(timer);
      if (err || !socket) reject(err ?? new Error('no socket'));
      else resolve(socket);
    });
  });
}

/** A client for these settings, not yet connected until its 'connect' (or 'error'). */
async function openClient(config: MqttConfig, options: IClientOptions, onPeer: (sha256: string) => void): Promise<MqttClient> {
  const url = new URL(config.brokerUrl!);
  const base: IClientOptions = {
    ...options,
    ...(config.username ? { username: config.username } : {}),
    ...(config.password ? { password: config.password } : {}),
    protocolVersion: 4,
    reconnectPeriod: 0, // reconnects are ours: backoff, and none after a refused login
    connectTimeout: CONNECT_TIMEOUT_MS,
    keepalive: 30,
    clean: true,
  };
  // Loaded once a broker is set, not with the service (package.ts says why).
  const mqtt = await import('./package.js');
  if (url.protocol === 'mqtts:') {
    const socket = await verifiedTlsSocket(url, config.tlsPinSha256, onPeer);
    return new mqtt.MqttClient(() => socket, base);
  }
  // mqtt:// and ws(s):// (wss verified against the certificate authorities as usual).
  return mqtt.connect(config.brokerUrl!, base);
}

export function createMqtt(app: AppContext, options: MqttOptions): MqttSubsystem {
  const commands = createCommandHandler(app);
  let config = readMqttConfig(app);
  let status: MqttStatus = { status: 'disabled', lastError: null, connectedAt: null };
  let client: MqttClient | undefined;
  let running = false;
  let paused = false;
  let attempt = 0;
  let retryTimer: NodeJS.Timeout | undefined;
  let publishTimer: NodeJS.Timeout | undefined;
  let refreshTimer: NodeJS.Timeout | undefined;
  /** What each retained topic holds now (as this connection published it), to publish changes only. */
  const published = new Map<string, string>();
  let unsubscribe: (() => void) | undefined;
  /** The discovery topics remembered in the database (PUBLISHED_KEY), read once rather than at every publication. */
  let rememberedConfigTopics: string[] | undefined;
  const remembered = () => (rememberedConfigTopics ??= readServiceState<string[]>(app.db, PUBLISHED_KEY) ?? []);
  /** Bumped on every (re)connection: callbacks of an older client are ignored. */
  let generation = 0;

  const installId = () => currentSettings(app).userId;
  const device = () => ({ installId: installId(), version: app.version, configurationUrl: options.serviceUrl() });

  function setStatus(next: MqttStatus): void {
    const changed = next.status !== status.status || next.lastError !== status.lastError;
    status = next;
    if (!changed) return;
    if (next.status === 'error' || (next.status === 'connecting' && next.lastError)) app.log.warn('mqtt', { status: next.status, error: next.lastError });
    else app.log.info('mqtt', { status: next.status });
  }

  function publish(c: MqttClient, topic: string, payload: string, qos: 0 | 1 = 0): void {
    published.set(topic, payload);
    c.publish(topic, payload, { retain: true, qos });
  }

  /** Discovery configs and states, each only when it changed (or everything, when `force`). */
  function publishAll(force: boolean): void {
    const c = client;
    if (!c || !c.connected || paused || app.unavailable) return;
    let configs;
    let states;
    try {
      configs = discoveryConfigs(app, config, device());
      states = statePayloads(app, config);
    } catch (err) {
      app.log.error('mqtt: computing the states failed', { error: String(err) });
      return;
    }
    const configTopics = new Set(configs.map((x) => x.topic));
    // Entities that are gone (a deleted saved meal, commands turned off): an empty retained config removes them.
    const before = remembered();
    for (const topic of before) if (!configTopics.has(topic)) publish(c, topic, '', 1);
    for (const x of configs) {
      const text = JSON.stringify(x.payload);
      if (force || published.get(x.topic) !== text) publish(c, x.topic, text, 1);
    }
    // Remembered for the next start (rarely changes; never while an import's worker or another program holds the write lock).
    if ((before.length !== configTopics.size || before.some((t) => !configTopics.has(t))) && !app.writes.blocked) {
      try {
        writeServiceState(app.db, PUBLISHED_KEY, [...configTopics]);
        rememberedConfigTopics = [...configTopics];
      } catch (err) {
        app.log.warn('mqtt: could not remember the published discovery topics', { error: String(err) });
      }
    }
    for (const [topic, payload] of states) {
      const previous = published.get(topic);
      if (force || previous === undefined || stateFingerprint(previous) !== stateFingerprint(payload)) publish(c, topic, payload);
    }
  }

  function schedulePublish(): void {
    if (publishTimer || !client?.connected) return;
    publishTimer = setTimeout(() => {
      publishTimer = undefined;
      publishAll(false);
    }, PUBLISH_DEBOUNCE_MS);
    publishTimer.unref();
  }

  function onMessage(topic: string, payload: Buffer, retained: boolean): void {
    const text = payload.toString('utf8');
    const topics = topicsFor(config);
    if (topic === topics.haStatus) {
      // Home Assistant (re)started and forgot what it knew: say it all again.
      if (text === 'online') publishAll(true);
      return;
    }
    if (!config.commandsEnabled || paused || app.unavailable) return;
    if (topic !== topics.logSavedMeal && topic !== topics.logMeal) return;
    const command = topic === topics.logSavedMeal ? 'log_saved_meal' : 'log_meal';
    let outcome: CommandOutcome;
    // A retained command would log its meal again at every reconnect: commands are presses, never state.
    if (retained) outcome = { ignored: 'the command was published with retain; publish commands without it' };
    else {
      try {
        outcome = command === 'log_saved_meal' ? commands.logSavedMeal(text) : commands.logMeal(text);
      } catch (err) {
        outcome = { ignored: (err as Error).message };
      }
    }
    const c = client;
    if ('ignored' in outcome) {
      app.log.warn('mqtt: a command was ignored; nothing was logged', { topic, reason: outcome.ignored });
      c?.publish(topics.commandResult, JSON.stringify({ event_type: 'refused', command, reason: outcome.ignored }), { qos: 1 });
    } else {
      const meal = outcome.logged;
      app.log.info('mqtt: meal logged from a command', { topic, meal_id: meal.id });
      const logged = { event_type: 'logged', command, meal_id: meal.id, description: meal.description, calories: meal.calories, meal_type: meal.mealType };
      c?.publish(topics.commandResult, JSON.stringify(logged), { qos: 1 });
    }
  }

  function scheduleReconnect(): void {
    clearTimeout(retryTimer);
    if (!running || paused) return;
    const first = options.reconnectFirstMs ?? RECONNECT_FIRST_MS;
    const delay = Math.min(options.reconnectMaxMs ?? RECONNECT_MAX_MS, first * 2 ** attempt);
    attempt++;
    retryTimer = setTimeout(() => void connect(), delay);
    retryTimer.unref();
  }

  /** This device became or stopped being the webhook host: connect, or leave the broker to the host. */
  function roleChanged(): void {
    void disconnect({ clearRetained: false }).then(() => connect());
  }

  async function connect(): Promise<void> {
    clearTimeout(retryTimer);
    const mine = ++generation;
    if (!running || paused || !config.enabled || !config.brokerUrl) {
      setStatus({ status: 'disabled', lastError: null, connectedAt: null });
      return;
    }
    const host = app.role.webhookHostName();
    if (host !== null) {
      // With sync, one device talks to Home Assistant: the webhook host.
      setStatus({ status: 'disabled', lastError: `MQTT messages are sent by ${host}, the webhook host of this synced history.`, connectedAt: null });
      return;
    }
    setStatus({ status: 'connecting', lastError: status.lastError, connectedAt: null });
    const topics = topicsFor(config);
    let c: MqttClient;
    try {
      c = await openClient(
        config,
        {
          clientId: `chyme_${installId().replace(/[^A-Za-z0-9_-]/g, '')}`,
          // A crash or a pulled cable: the broker says "offline" for us.
          will: { topic: topics.availability, payload: Buffer.from('offline'), retain: true, qos: 1 },
        },
        () => undefined,
      );
    } catch (err) {
      if (mine !== generation) return;
      setStatus({ status: 'connecting', lastError: errorSentence(err, config.brokerUrl), connectedAt: null });
      scheduleReconnect();
      return;
    }
    if (mine !== generation) {
      c.end(true);
      return;
    }
    client = c;
    published.clear();
    let refused = false;
    c.on('connect', () => {
      if (mine !== generation) return;
      attempt = 0;
      publish(c, topics.availability, 'online', 1);
      publishAll(true);
      // "connected" once the broker has taken the subscriptions too: from then on a command is heard.
      c.subscribe([topics.haStatus, ...(config.commandsEnabled ? [topics.logSavedMeal, topics.logMeal] : [])], { qos: 1 }, (err) => {
        if (mine !== generation || !c.connected) return;
        if (err) app.log.warn('mqtt: subscribing failed', { error: String(err) });
        setStatus({ status: 'connected', lastError: null, connectedAt: app.clock.now() });
      });
    });
    c.on('message', (topic, payload, packet) => {
      if (mine === generation) onMessage(topic, payload, packet.retain);
    });
    c.on('error', (err) => {
      if (mine !== generation) return;
      const code = (err as { code?: unknown }).code;
      if (isLoginRefusal(code)) {
        // Not a retry storm: the same login would be refused again. Changing the settings retries.
        refused = true;
        setStatus({ status: 'error', lastError: `${connackSentence(code as number)}; change the login in Integrations → Home Assistant (MQTT)`, connectedAt: null });
        c.end(true);
        return;
      }
      status = { ...status, lastError: errorSentence(err, config.brokerUrl!) };
    });
    c.on('close', () => {
      if (mine !== generation || refused) return;
      client = undefined;
      if (!running || paused) return;
      setStatus({ status: 'connecting', lastError: status.lastError ?? 'the connection to the broker was lost', connectedAt: null });
      c.end(true);
      scheduleReconnect();
    });
  }

  /** Says "offline" (a clean stop) and closes the connection; optionally clears what it published first. */
  async function disconnect(options: { clearRetained: boolean }): Promise<void> {
    generation++;
    clearTimeout(retryTimer);
    clearTimeout(publishTimer);
    publishTimer = undefined;
    const c = client;
    client = undefined;
    if (!c) return;
    if (c.connected) {
      const topics = topicsFor(config);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 2000);
        if (options.clearRetained) {
          for (const topic of remembered()) c.publish(topic, '', { retain: true, qos: 1 });
          for (const topic of published.keys()) if (!topic.startsWith(`${config.discoveryPrefix}/`)) c.publish(topic, '', { retain: true, qos: 1 });
          writeServiceState(app.db, PUBLISHED_KEY, []);
          rememberedConfigTopics = [];
        }
        c.publish(topics.availability, options.clearRetained ? '' : 'offline', { retain: true, qos: 1 }, () => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    await new Promise<void>((resolve) => c.end(false, {}, () => resolve()));
    published.clear();
  }

  return {
    name: 'mqtt',
    config: () => config,
    status: () => status,

    start() {
      running = true;
      config = readMqttConfig(app);
      unsubscribe = app.bus.subscribe((event) => {
        if (event.type !== 'test.ping') schedulePublish();
      });
      app.hooks.savedMealsChanged.push(schedulePublish);
      app.hooks.roleChanged.push(roleChanged);
      refreshTimer = setInterval(() => publishAll(false), REFRESH_INTERVAL_MS);
      refreshTimer.unref();
      void connect();
    },

    async stop() {
      running = false;
      unsubscribe?.();
      const hook = app.hooks.savedMealsChanged.indexOf(schedulePublish);
      if (hook >= 0) app.hooks.savedMealsChanged.splice(hook, 1);
      const roleHook = app.hooks.roleChanged.indexOf(roleChanged);
      if (roleHook >= 0) app.hooks.roleChanged.splice(roleHook, 1);
      clearInterval(refreshTimer);
      await disconnect({ clearRetained: false });
      setStatus({ status: 'disabled', lastError: null, connectedAt: null });
    },

    async pause() {
      paused = true;
      await disconnect({ clearRetained: false });
    },

    resume() {
      paused = false;
      // A restore may have brought other settings, and another list of what was published.
      config = readMqttConfig(app);
      rememberedConfigTopics = undefined;
      attempt = 0;
      void connect();
    },

    async update(body) {
      const next = applyMqttUpdate(config, body);
      const moved = next.discoveryPrefix !== config.discoveryPrefix || next.topicPrefix !== config.topicPrefix || next.brokerUrl !== config.brokerUrl;
      const reconnect =
        moved ||
        next.enabled !== config.enabled ||
        next.username !== config.username ||
        next.password !== config.password ||
        next.tlsPinSha256 !== config.tlsPinSha256 ||
        next.commandsEnabled !== config.commandsEnabled ||
        status.status !== 'connected';
      if (reconnect) {
        // Under old prefixes (or leaving this broker, or turning off): remove what Home Assistant was told.
        await disconnect({ clearRetained: moved || !next.enabled });
      }
      writeMqttConfig(app, next);
      config = next;
      attempt = 0;
      if (reconnect) {
        setStatus({ status: next.enabled ? 'connecting' : 'disabled', lastError: null, connectedAt: null });
        if (running) void connect();
      }
      return config;
    },

    async test(body) {
      const candidate = applyMqttUpdate({ ...config, enabled: true }, { ...body, enabled: true });
      let peer: string | null = null;
      try {
        const c = await openClient(candidate, { clientId: `chyme_test_${Math.random().toString(36).slice(2, 10)}` }, (sha) => (peer = sha));
        return await new Promise<MqttTestResult>((resolve) => {
          const done = (error: string | null) => {
            c.end(true);
            resolve({ ok: error === null, error, tlsCertificateSha256: peer });
          };
          c.once('connect', () => done(null));
          c.once('error', (err) => done(errorSentence(err, candidate.brokerUrl!)));
          c.once('close', () => done('the broker closed the connection'));
        });
      } catch (err) {
        return { ok: false, error: errorSentence(err, candidate.brokerUrl!), tlsCertificateSha256: peer };
      }
    },
  };
}
