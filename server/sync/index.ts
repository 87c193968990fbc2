import { hostname } from 'node:os';
import type { AppContext, DeviceRole, Subsystem } from '../app-context.js';
import { readServiceState, writeServiceState } from '../db/service-state.js';
import { clearSyncState, countPendingChanges, forgetSyncConfig, getSyncConfig, hasDoc, listConflicts, listIntegrityProblems, saveSyncConfig, type SyncConfig } from '../db/sync.js';
import { ConflictError, InvalidInputError, UpstreamError } from '../domain-errors.js';
import { randomToken } from '../ids.js';
import { currentSettings } from '../settings.js';
import { isoUtc } from '../time/tz.js';
import { base32, deriveKeys, fromBase32, newHistorySecret, SECRET_BYTES, type HistoryKeys } from './crypto.js';
import { ROOT_NAME, type RootDoc } from './documents.js';
import type { EngineOptions, JoinProgress, SyncEngine } from './engine.js';
import { recordLabel } from './labels.js';
import type { SyncStatus } from './schemas.js';
import type { DocMerger } from './merger.js';

/**
 * Sync as the service runs it: set-up, joining and leaving (the API and the command line), the
 * engine while sync is on, this device's role (the one webhook host), and the status resource.
 */

export const PAIRING_PREFIX = 'chyme-sync:v2:';
/**
 * How long set-up and joining wait for the relay to answer before saying it cannot be reached. A
 * refused connection, token or key is reported at once; this bounds only a relay that is slow to answer.
 */
const CONNECT_TIMEOUT_MS = 30_000;
/** How long joining waits for the whole history the relay holds (a ten-year history takes seconds). */
const CATCH_UP_TIMEOUT_MS = 300_000;
/** How long a command waits for the relay to confirm what it sent before it ends. */
const ONE_SHOT_CONFIRM_MS = 60_000;

export interface PairingCode {
  relay: string;
  /** The history secret: whoever holds the code can read and change the history. */
  secret: Uint8Array;
}

/**
 * `chyme-sync:v2:` + base32 of `0x02 ‖ secret (16) ‖ relay URL (UTF-8)`: upper-case letters and
 * digits only, so a QR code carries it in alphanumeric mode. It holds no relay token: a device that
 * joins needs only the secret (the relay checks a key derived from it).
 */
export function encodePairingCode(p: PairingCode): string {
  const url = new TextEncoder().encode(p.relay);
  const bytes = new Uint8Array(1 + p.secret.length + url.length);
  bytes[0] = 2;
  bytes.set(p.secret, 1);
  bytes.set(url, 1 + p.secret.length);
  return PAIRING_PREFIX + base32(bytes);
}

export function decodePairingCode(code: string): PairingCode {
  const bad = () => new InvalidInputError('pairing_code', 'That is not a Chyme pairing code: copy the whole code from Integrations → Sync on the other device (it starts with "chyme-sync:v2:").');
  const text = code.replace(/\s+/g, '');
  if (!text.toLowerCase().startsWith(PAIRING_PREFIX)) throw bad();
  const bytes = fromBase32(text.slice(PAIRING_PREFIX.length));
  if (!bytes || bytes.length < 1 + SECRET_BYTES + 5 || bytes[0] !== 2) throw bad();
  let relay: string;
  try {
    relay = new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(1 + SECRET_BYTES));
  } catch {
    throw bad();
  }
  if (!/^wss?:\/\/\S+$/.test(relay)) throw bad();
  return { relay, secret: bytes.slice(1, 1 + SECRET_BYTES) };
}

/** What the running service (or the last command) knew of the history, for `chyme sync status`. */
interface RuntimeState {
  connected: boolean;
  last_synced_ms: number | null;
  last_error: string | null;
  webhook_host: RootDoc['webhook_host'];
  devices: RootDoc['devices'];
  updated_ms: number;
}
const RUNTIME_KEY = 'sync_runtime';

export interface SyncSubsystem extends Subsystem {
  status(): SyncStatus;
  setup(input: { relay: string; token: string; name?: string | undefined }): Promise<SyncStatus>;
  join(input: { pairing_code: string; name?: string | undefined }): Promise<SyncStatus>;
  pairingCode(): string;
  leave(): Promise<SyncStatus>;
  becomeWebhookHost(): Promise<SyncStatus>;
  /** The running engine (tests, benches); undefined while sync is off. */
  engine(): SyncEngine | undefined;
  /** How far the join under way has come (newest weeks first; the phone shows it beside Today); null when none runs. */
  joinProgress(): JoinProgress | null;
}

export interface SyncOptions {
  dbPath: string;
  /** false: never connect (one-device tests). */
  connect?: boolean;
  retryMs?: number;
  /** The command line: no background work, set-up waits for the relay to confirm. */
  oneShot?: boolean;
  /** Where each engine merges the shards it receives (merger.ts; on the engine's thread when not given). */
  merger?: () => DocMerger;
}

export function createSync(app: AppContext, options: SyncOptions): SyncSubsystem {
  let engine: SyncEngine | undefined;
  /** The engine of a join under way (it becomes `engine` once the history is in). */
  let joining: SyncEngine | undefined;
  let starting: Promise<void> | undefined;
  let busy = false;
  let lastRole = true;
  let lastConnected = false;
  const unsubscribe: Array<() => void> = [];
  /** Kept over a restore: the device's set-up is not part of the file it restores. */
  let heldConfig: SyncConfig | undefined;

  const role: DeviceRole = {
    sendsWebhooks: () => {
      const host = currentHost();
      const config = getSyncConfig(app.db);
      if (!config) return true;
      // Before the engine has opened the history (the first moments after start), the host this
      // device last knew decides: a device that is not the host never sends meanwhile.
      return host?.device_id === config.deviceId;
    },
    webhookHostName: () => {
      const config = getSyncConfig(app.db);
      const host = config && currentHost();
      return config && host && host.device_id !== config.deviceId ? host.device_name : null;
    },
  };
  app.role = role;

  function currentHost(): RootDoc['webhook_host'] {
    const root = engine ? safeRoot(engine) : undefined;
    if (root) return root.webhook_host;
    return readServiceState<RuntimeState>(app.db, RUNTIME_KEY)?.webhook_host ?? null;
  }

  function statusChanged(): void {
    if (!engine) return;
    const e = engine;
    const root = safeRoot(e);
    if (!root) return;
    const runtime: RuntimeState = {
      connected: e.connected,
      last_synced_ms: e.lastSyncedMs ?? readServiceState<RuntimeState>(app.db, RUNTIME_KEY)?.last_synced_ms ?? null,
      last_error: e.lastError,
      webhook_host: root.webhook_host ? { ...root.webhook_host } : null,
      devices: JSON.parse(JSON.stringify(root.devices)) as RootDoc['devices'],
      updated_ms: app.clock.now(),
    };
    try {
      const before = readServiceState<RuntimeState>(app.db, RUNTIME_KEY);
      const hostChanged = before?.webhook_host?.device_id !== runtime.webhook_host?.device_id;
      const joined = Object.keys(runtime.devices).filter((id) => !before?.devices[id] && id !== e.config.deviceId);
      const left = Object.keys(runtime.devices).filter((id) => runtime.devices[id]!.left_ms !== undefined && before?.devices[id] && before.devices[id]!.left_ms === undefined);
      // Written when something a person or the next process needs changed: the last sync time
      // moves with every push, and is kept to the minute here (the running engine knows it exactly).
      const same =
        before &&
        before.connected === runtime.connected &&
        Math.abs((before.last_synced_ms ?? 0) - (runtime.last_synced_ms ?? 0)) < 60_000 &&
        (before.last_synced_ms === null) === (runtime.last_synced_ms === null) &&
        before.last_error === runtime.last_error &&
        JSON.stringify(before.webhook_host) === JSON.stringify(runtime.webhook_host) &&
        JSON.stringify(before.devices) === JSON.stringify(runtime.devices);
      if (!same) {
        app.bus.write((emit) => {
          writeServiceState(app.db, RUNTIME_KEY, runtime);
          if (!before) return;
          const stamp = isoUtc(app.clock.now());
          for (const id of joined) emit('sync.device_joined', { object: 'sync.device', device_id: id, device_name: runtime.devices[id]!.name, at: stamp });
          for (const id of left) emit('sync.device_left', { object: 'sync.device', device_id: id, device_name: runtime.devices[id]!.name, at: stamp });
          if (hostChanged) emit('sync.webhook_host_changed', { object: 'sync.webhook_host', ...hostResource(runtime.webhook_host), at: stamp });
          if (runtime.connected !== lastConnected) emit('sync.status_changed', { object: 'sync.status', connected: runtime.connected, last_error: runtime.last_error, at: stamp });
        });
      }
      lastConnected = runtime.connected;
    } catch (err) {
      // A status note is never worth failing over (a restore may hold the database).
      app.log.warn('sync: recording the status failed', { error: String(err) });
    }
    const nowRole = role.sendsWebhooks();
    if (nowRole !== lastRole) {
      lastRole = nowRole;
      for (const hook of app.hooks.roleChanged) hook();
    }
  }

  function hostResource(h: RootDoc['webhook_host']) {
    return h ? { device_id: h.device_id, device_name: h.device_name, since: isoUtc(h.since_ms) } : null;
  }

  async function keysOf(config: SyncConfig): Promise<HistoryKeys> {
    const secret = fromBase32(config.historySecret);
    if (!secret || secret.length < SECRET_BYTES) throw new Error('This device\'s sync set-up has no usable history secret; leave sync and join again.');
    return deriveKeys(secret);
  }

  /**
   * Automerge (wasm) and ws are loaded only once sync is on: a device without sync, and every other
   * command, never pays for them. `token`: only a set-up creates the space on the relay.
   */
  async function newEngine(config: SyncConfig, keys: HistoryKeys, token: string | null, onStatus: () => void): Promise<SyncEngine> {
    const [{ SyncEngine: Engine }, { RelayConnection }, { WebSocket }] = await Promise.all([import('./engine.js'), import('./relay-client.js'), import('ws')]);
    const engineOptions: EngineOptions = { onStatus, ...(options.merger ? { merger: options.merger() } : {}) };
    if (options.connect !== false) {
      engineOptions.connection = (handlers) =>
        new RelayConnection(config.relayUrl, {
          socketFactory: (url) => new WebSocket(url, { maxPayload: 64 * 1024 * 1024 }) as never,
          token,
          sid: keys.sid,
          auth: keys.auth,
          ...(options.retryMs ? { retryIntervalMs: options.retryMs } : {}),
          ...handlers,
        });
    }
    return new Engine(app, config, keys, engineOptions);
  }

  async function startEngine(config: SyncConfig): Promise<void> {
    const keys = await keysOf(config);
    const e = await newEngine(config, keys, null, statusChanged);
    if (!(await e.openRoot())) {
      // Set up, but the history never arrived whole (a join cut short): it comes now.
      e.connect();
      if (!(await e.catchUp(CATCH_UP_TIMEOUT_MS, { quiet: true })) || !(await e.openRoot())) {
        await e.close();
        throw new Error('the history has not arrived from the relay yet; sync starts again at the next start');
      }
    }
    engine = e;
    unsubscribe.push(app.bus.onCommit(() => e.kick()));
    e.start();
    void e.announceDevice(app.clock.now()).catch(() => undefined);
    statusChanged();
  }

  async function stopEngine(): Promise<void> {
    for (const u of unsubscribe.splice(0)) u();
    const e = engine;
    engine = undefined;
    await e?.close();
  }

  function status(): SyncStatus {
    const config = getSyncConfig(app.db);
    const base: SyncStatus = {
      object: 'sync',
      enabled: false,
      encrypted: true,
      device_id: null,
      device_name: null,
      relay: null,
      connected: false,
      last_synced_at: null,
      pending_changes: 0,
      webhook_host: null,
      is_webhook_host: true,
      peers: [],
      conflicts: [],
      integrity: [],
      last_error: null,
    };
    if (!config) return base;
    const runtime = readServiceState<RuntimeState>(app.db, RUNTIME_KEY);
    const root = engine ? safeRoot(engine) : undefined;
    const devices = root?.devices ?? runtime?.devices ?? {};
    const host = root ? root.webhook_host : (runtime?.webhook_host ?? null);
    const lastSynced = engine?.lastSyncedMs ?? runtime?.last_synced_ms ?? null;
    const connected = engine ? engine.connected : (runtime?.connected ?? false);
    return {
      ...base,
      enabled: true,
      device_id: config.deviceId,
      device_name: config.deviceName,
      relay: config.relayUrl,
      connected,
      last_synced_at: lastSynced === null ? null : isoUtc(lastSynced),
      pending_changes: engine ? engine.pendingCount() : countPendingChanges(app.db),
      webhook_host: hostResource(host),
      is_webhook_host: host?.device_id === config.deviceId,
      peers: Object.entries(devices)
        .filter(([, d]) => d.left_ms === undefined)
        .map(([id, d]) => {
          const thisDevice = id === config.deviceId;
          // This device is seen now while it runs; another one when it last said so, or when its
          // presence note last arrived (connected devices send one every 30 s).
          const seen = Math.max(d.last_seen_ms ?? 0, (thisDevice && engine ? app.clock.now() : engine?.heardFrom(id)) ?? 0);
          return { device_id: id, device_name: d.name, joined_at: isoUtc(d.joined_ms), last_seen_at: seen === 0 ? null : isoUtc(seen), this_device: thisDevice };
        }),
      conflicts: listConflicts(app.db).map((c) => ({
        record_type: c.entity as SyncStatus['conflicts'][number]['record_type'],
        record_id: c.recordId,
        record_label: recordLabel(app, c.entity, c.recordId),
        field: c.field,
        kept: c.kept,
        other_values: c.others,
        detected_at: isoUtc(c.detectedMs),
      })),
      integrity: listIntegrityProblems(app.db).map((p) => ({ relay_seq: p.relaySeq, problem: p.problem, detected_at: isoUtc(p.detectedMs) })),
      last_error: engine?.lastError ?? runtime?.last_error ?? null,
    };
  }

  /** One set-up change at a time, and never while sync is in the other state. */
  async function exclusive<T>(fn: () => Promise<T>): Promise<T> {
    if (busy) throw new ConflictError('sync_busy', 'Sync is being set up, joined or left right now; try again in a moment.');
    busy = true;
    try {
      await starting?.catch(() => undefined);
      return await fn();
    } finally {
      busy = false;
    }
  }

  function mustBeOff(): void {
    if (getSyncConfig(app.db)) throw new ConflictError('sync_already_enabled', 'Sync is already set up on this device. Leave sync first to set it up again or to join another history.');
  }

  function mustBeOn(opts: { running: boolean } = { running: true }): SyncConfig {
    const config = getSyncConfig(app.db);
    if (!config || (opts.running && !engine)) throw new ConflictError('sync_not_enabled', 'Sync is not set up on this device: set it up, or join with a pairing code from another device.');
    return config;
  }

  function newConfig(relay: string, secret: Uint8Array, name: string | undefined): SyncConfig {
    return {
      deviceId: `dev_${randomToken(20)}`,
      deviceName: (name ?? hostname()).trim().slice(0, 60) || 'This computer',
      relayUrl: relay,
      historySecret: base32(secret),
      enabledMs: app.clock.now(),
    };
  }

  /** A new engine that the relay has welcomed, or an error that says why not (nothing is written then). */
  async function connected(config: SyncConfig, keys: HistoryKeys, token: string | null): Promise<SyncEngine> {
    const e = await newEngine(config, keys, token, () => undefined);
    if (options.connect === false) return e;
    e.connect();
    if (!(await e.waitUntilConnected(CONNECT_TIMEOUT_MS))) {
      const why = e.lastError ?? `No answer from the relay at ${config.relayUrl} within ${CONNECT_TIMEOUT_MS / 1000} s.`;
      await e.close();
      // One sentence (the command line prints it as its one line): the reason, then what it left.
      throw new UpstreamError('relay_unreachable', `${why.replace(/\.$/, '')}; nothing was changed.`);
    }
    return e;
  }

  /** Hands a set-up engine over to the running service (or closes it after a command). */
  async function adopt(e: SyncEngine): Promise<void> {
    if (options.oneShot) {
      // A command ends here: the relay should have everything before the process exits. If it has
      // not confirmed by then, chyme serve (or the app) sends the rest: nothing is lost either way.
      await e.waitUntilConfirmed(ONE_SHOT_CONFIRM_MS);
      engine = e;
      statusChanged();
      engine = undefined;
      await e.close();
      return;
    }
    engine = e;
    unsubscribe.push(app.bus.onCommit(() => e.kick()));
    e.start();
    statusChanged();
  }

  return {
    name: 'sync',
    start() {
      const config = getSyncConfig(app.db);
      // A set-up or join under way (a service whose start came late on a busy machine) ends with
      // its own engine: a second one started from its half-written state pulled the whole history
      // again beside the join (the join downloaded it twice).
      if (!config || engine || busy || options.oneShot) return;
      starting = startEngine(config).catch((err: unknown) => app.log.error('sync could not start; it will try again at the next start', { error: String(err) }));
    },
    async stop() {
      await starting?.catch(() => undefined);
      await stopEngine();
    },
    async pause() {
      await starting?.catch(() => undefined);
      heldConfig = getSyncConfig(app.db);
      await stopEngine();
    },
    resume() {
      // A restored file brings its own (older) sync bookkeeping: the device's set-up stays as it
      // was, and the synced records come from the relay again (a pull from the start), while
      // records only the backup has join the history.
      const db = app.db;
      const restoredConfig = getSyncConfig(db);
      if (heldConfig || restoredConfig) {
        clearSyncState(db);
        if (heldConfig) saveSyncConfig(db, heldConfig);
      }
      heldConfig = undefined;
      starting = undefined;
      this.start();
    },
    status,
    engine: () => engine,
    joinProgress: () => joining?.joinProgress ?? null,
    setup: (input) =>
      exclusive(async () => {
        mustBeOff();
        const secret = newHistorySecret();
        const config = newConfig(input.relay, secret, input.name);
        const keys = await deriveKeys(secret);
        // The relay creates the space on this first hello (the token says this device may).
        const e = await connected(config, keys, input.token);
        clearSyncState(app.db);
        saveSyncConfig(app.db, config);
        await e.createRoot(currentSettings(app), app.clock.now());
        // Everything already on this device becomes the start of the history.
        await e.adoptLocalRecords();
        await adopt(e);
        return status();
      }),
    join: (input) =>
      exclusive(async () => {
        mustBeOff();
        const code = decodePairingCode(input.pairing_code);
        const keys = await deriveKeys(code.secret);
        const config = newConfig(code.relay, code.secret, input.name);
        // A wrong secret names a space the relay does not have: refused here, nothing written.
        // (The engine takes nothing from the relay until catchUp below.)
        const e = await connected(config, keys, null);
        // The same history again (this device left it and kept its documents): the edits made
        // meanwhile are in the outbox and merge field by field. Another history: start clean.
        const rejoin = hasDoc(app.db, await keys.oid(ROOT_NAME));
        if (!rejoin) clearSyncState(app.db);
        saveSyncConfig(app.db, config);
        if (rejoin) {
          await e.openRoot();
          // Written into this device's copies before the relay's changes arrive, so that they are
          // concurrent with the other devices' edits (both kept, a same-field clash listed).
          await e.drain();
        }
        // The history the relay holds (no events: it is not news), then what this device had before.
        // The device that set sync up may still be sending the history's first document: it is
        // waited for (it arrives within moments of the set-up).
        const deadline = Date.now() + CATCH_UP_TIMEOUT_MS;
        joining = e;
        try {
          for (;;) {
            const whole = await e.catchUp(Math.max(1, deadline - Date.now()), { quiet: true });
            if (whole && (await e.openRoot())) break;
            if (Date.now() > deadline || !e.connected) {
              await e.close();
              clearSyncState(app.db);
              throw new UpstreamError('relay_unreachable', `${e.lastError ?? 'The relay did not send the history in time.'} Nothing was kept; try again.`);
            }
            await new Promise((r) => setTimeout(r, 200));
          }
        } finally {
          joining = undefined;
        }
        await e.announceDevice(app.clock.now());
        await e.adoptLocalRecords();
        e.lastSyncedMs = app.clock.now();
        await adopt(e);
        return status();
      }),
    pairingCode() {
      const config = mustBeOn({ running: false });
      const secret = fromBase32(config.historySecret);
      if (!secret) throw new Error('no history secret');
      return encodePairingCode({ relay: config.relayUrl, secret });
    },
    leave: () =>
      exclusive(async () => {
        // A command runs no engine (oneShot): it opens the history just long enough to say goodbye.
        const config = mustBeOn({ running: !options.oneShot });
        if (!engine) await startEngine(config);
        const e = engine!;
        await e.markLeft(app.clock.now());
        await e.waitUntilConfirmed(5000);
        await stopEngine();
        app.bus.write((emit) => {
          // The documents and the outbox stay (see forgetSyncConfig): joining again merges.
          forgetSyncConfig(app.db);
          emit('sync.device_left', { object: 'sync.device', device_id: e.config.deviceId, device_name: e.config.deviceName, at: isoUtc(app.clock.now()) });
        });
        if (!lastRole) {
          lastRole = true;
          for (const hook of app.hooks.roleChanged) hook();
        }
        return status();
      }),
    async becomeWebhookHost() {
      mustBeOn();
      await engine!.setWebhookHost(app.clock.now());
      statusChanged();
      return status();
    },
  };
}

function safeRoot(e: SyncEngine): RootDoc | undefined {
  try {
    return e.rootDoc();
  } catch {
    return undefined;
  }
}
