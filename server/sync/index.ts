import { rmSync } from 'node:fs';
import { hostname } from 'node:os';
import type { AppContext, DeviceRole, Subsystem } from '../app-context.js';
import { readServiceState, writeServiceState } from '../db/service-state.js';
import { CLEAN_STOP_KEY, clearSyncState, countOutbox, getSyncConfig, listConflicts, saveSyncConfig, type SyncConfig } from '../db/sync.js';
import { ConflictError, InvalidInputError, UpstreamError } from '../domain-errors.js';
import { randomToken } from '../ids.js';
import { currentSettings } from '../settings.js';
import { isoUtc } from '../time/tz.js';
import type { RootDoc } from './documents.js';
import type { EngineOptions, SyncEngine } from './engine.js';
import type { SyncStatus } from './schemas.js';

/**
 * Sync as the service runs it: set-up, joining and leaving (the API and the command line), the
 * engine while sync is on, this device's role (the one webhook host), and the status resource.
 */

export const PAIRING_PREFIX = 'chyme-sync:';
/**
 * How long set-up and joining wait for the relay to answer before saying it cannot be reached. A
 * refused connection or token is reported at once; this bounds only a relay that is slow to answer
 * (measured: over 10 s for a relay on a loaded two-core machine just after it stored ten years).
 */
const CONNECT_TIMEOUT_MS = 30_000;
/** How long joining waits for the history's root document. */
const FIND_ROOT_TIMEOUT_MS = 60_000;
/** How long a command waits for the relay to confirm what it sent before it ends. */
const ONE_SHOT_CONFIRM_MS = 15_000;

/** Where a database keeps its copy of the sync documents: beside the file, never inside it. */
export function syncStorageDir(dbPath: string): string {
  return `${dbPath}.sync`;
}

export interface PairingCode {
  relay: string;
  token: string;
  root: string;
}

export function encodePairingCode(p: PairingCode): string {
  return PAIRING_PREFIX + Buffer.from(JSON.stringify({ v: 1, relay: p.relay, token: p.token, root: p.root })).toString('base64url');
}

export function decodePairingCode(code: string): PairingCode {
  const bad = () => new InvalidInputError('pairing_code', 'That is not a Chyme pairing code: copy the whole code from Integrations → Sync on the other device (it starts with "chyme-sync:").');
  const text = code.replace(/\s+/g, '');
  if (!text.startsWith(PAIRING_PREFIX)) throw bad();
  try {
    const v = JSON.parse(Buffer.from(text.slice(PAIRING_PREFIX.length), 'base64url').toString('utf8')) as Record<string, unknown>;
    if (v.v !== 1 || typeof v.relay !== 'string' || typeof v.token !== 'string' || typeof v.root !== 'string' || !/^wss?:\/\//.test(v.relay) || !v.root.startsWith('automerge:')) throw bad();
    return { relay: v.relay, token: v.token, root: v.root };
  } catch {
    throw bad();
  }
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
  becomeWebhookHost(): SyncStatus;
  /** The running engine (tests, benches); undefined while sync is off. */
  engine(): SyncEngine | undefined;
}

export interface SyncOptions {
  dbPath: string;
  /** false: never connect (one-device tests). */
  connect?: boolean;
  retryMs?: number;
  idleUnloadMs?: number;
  /** The command line: no background work, set-up waits for the relay to confirm. */
  oneShot?: boolean;
}

export function createSync(app: AppContext, options: SyncOptions): SyncSubsystem {
  let engine: SyncEngine | undefined;
  let starting: Promise<void> | undefined;
  let busy = false;
  let lastRole = true;
  let lastConnected = false;
  const unsubscribe: Array<() => void> = [];
  /** Kept over a restore: the device's set-up is not part of the file it restores. */
  let heldConfig: SyncConfig | undefined;

  const engineOptions = (): EngineOptions => ({
    storageDir: syncStorageDir(options.dbPath),
    ...(options.connect === false ? { connect: false } : {}),
    ...(options.retryMs ? { retryMs: options.retryMs } : {}),
    ...(options.idleUnloadMs ? { idleUnloadMs: options.idleUnloadMs } : {}),
    onStatus: statusChanged,
  });

  const role: DeviceRole = {
    sendsWebhooks: () => {
      if (!engine) {
        // Before the engine has opened the history (the first moments after start), the host
        // this device last knew decides: a device that is not the host never sends meanwhile.
        const config = getSyncConfig(app.db);
        if (!config) return true;
        return readServiceState<RuntimeState>(app.db, RUNTIME_KEY)?.webhook_host?.device_id === config.deviceId;
      }
      const host = engine.rootDoc().webhook_host;
      return host?.device_id === engine.config.deviceId;
    },
    webhookHostName: () => {
      if (!engine) {
        const config = getSyncConfig(app.db);
        const host = config && readServiceState<RuntimeState>(app.db, RUNTIME_KEY)?.webhook_host;
        return config && host && host.device_id !== config.deviceId ? host.device_name : null;
      }
      const host = engine.rootDoc().webhook_host;
      return host && host.device_id !== engine.config.deviceId ? host.device_name : null;
    },
  };
  app.role = role;

  function statusChanged(): void {
    if (!engine) return;
    const e = engine;
    let root: RootDoc;
    try {
      root = e.rootDoc();
    } catch {
      return;
    }
    const runtime: RuntimeState = {
      connected: e.connected,
      last_synced_ms: e.lastSyncedMs,
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
      app.bus.write((emit) => {
        writeServiceState(app.db, RUNTIME_KEY, runtime);
        if (!before) return;
        const stamp = isoUtc(app.clock.now());
        for (const id of joined) emit('sync.device_joined', { object: 'sync.device', device_id: id, device_name: runtime.devices[id]!.name, at: stamp });
        for (const id of left) emit('sync.device_left', { object: 'sync.device', device_id: id, device_name: runtime.devices[id]!.name, at: stamp });
        if (hostChanged) emit('sync.webhook_host_changed', { object: 'sync.webhook_host', ...hostResource(runtime.webhook_host), at: stamp });
        if (runtime.connected !== lastConnected) emit('sync.status_changed', { object: 'sync.status', connected: runtime.connected, last_error: runtime.last_error, at: stamp });
      });
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

  /**
   * Automerge (wasm) is loaded only once sync is on: a device without sync, and every other
   * command, never pays for it.
   */
  async function newEngine(config: SyncConfig, engineOpts: EngineOptions): Promise<SyncEngine> {
    const { SyncEngine: Engine } = await import('./engine.js');
    return new Engine(app, config, engineOpts);
  }

  async function startEngine(config: SyncConfig): Promise<void> {
    const e = await newEngine(config, engineOptions());
    try {
      await e.openRoot(FIND_ROOT_TIMEOUT_MS);
    } catch (err) {
      await e.close();
      throw err;
    }
    engine = e;
    unsubscribe.push(app.bus.onCommit(() => e.kick()));
    e.announceDevice(app.clock.now());
    e.start();
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
      last_error: null,
    };
    if (!config) return base;
    const runtime = readServiceState<RuntimeState>(app.db, RUNTIME_KEY);
    const root = engine ? safeRoot(engine) : undefined;
    const devices = root?.devices ?? runtime?.devices ?? {};
    const host = root ? root.webhook_host : (runtime?.webhook_host ?? null);
    const lastSynced = engine ? engine.lastSyncedMs : (runtime?.last_synced_ms ?? null);
    return {
      ...base,
      enabled: true,
      device_id: config.deviceId,
      device_name: config.deviceName,
      relay: config.relayUrl,
      connected: engine ? engine.connected : (runtime?.connected ?? false),
      last_synced_at: lastSynced === null ? null : isoUtc(lastSynced),
      pending_changes: engine ? engine.pendingCount() : countOutbox(app.db),
      webhook_host: hostResource(host),
      is_webhook_host: host?.device_id === config.deviceId,
      peers: Object.entries(devices)
        .filter(([, d]) => d.left_ms === undefined)
        .map(([id, d]) => ({
          device_id: id,
          device_name: d.name,
          joined_at: isoUtc(d.joined_ms),
          last_seen_at: d.last_seen_ms === undefined ? null : isoUtc(d.last_seen_ms),
          this_device: id === config.deviceId,
        })),
      conflicts: listConflicts(app.db).map((c) => ({
        record_type: c.entity as SyncStatus['conflicts'][number]['record_type'],
        record_id: c.recordId,
        field: c.field,
        kept: c.kept,
        other_values: c.others,
        detected_at: isoUtc(c.detectedMs),
      })),
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

  function mustBeOn(options: { running: boolean } = { running: true }): SyncConfig {
    const config = getSyncConfig(app.db);
    if (!config || (options.running && !engine)) throw new ConflictError('sync_not_enabled', 'Sync is not set up on this device: set it up, or join with a pairing code from another device.');
    return config;
  }

  function newConfig(relay: string, token: string, name: string | undefined, rootUrl: string): SyncConfig {
    return {
      deviceId: `dev_${randomToken(20)}`,
      deviceName: (name ?? hostname()).trim().slice(0, 60) || 'This computer',
      relayUrl: relay,
      relayToken: token,
      rootUrl,
      enabledMs: app.clock.now(),
    };
  }

  /** A new engine that has reached the relay, or an error that says why it could not. */
  async function connected(config: SyncConfig): Promise<SyncEngine> {
    rmSync(syncStorageDir(options.dbPath), { recursive: true, force: true });
    const e = await newEngine(config, { ...engineOptions(), onStatus: () => undefined });
    if (options.connect !== false && !(await e.waitUntilConnected(CONNECT_TIMEOUT_MS))) {
      const why = e.lastError ?? `No answer from the relay at ${config.relayUrl} within ${CONNECT_TIMEOUT_MS / 1000} s.`;
      await e.close();
      rmSync(syncStorageDir(options.dbPath), { recursive: true, force: true });
      throw new UpstreamError('relay_unreachable', `${why} Nothing was changed.`);
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
      // This command wrote or read every shard itself: the next start need not check them all.
      writeServiceState(app.db, CLEAN_STOP_KEY, true);
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
      if (!config || engine || options.oneShot) return;
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
      // was, and the synced records come from the documents again (the start-up pass).
      const db = app.db;
      const restoredConfig = getSyncConfig(db);
      if (heldConfig || restoredConfig) {
        clearSyncState(db);
        if (heldConfig) saveSyncConfig(db, heldConfig);
        // Every shard is read again, and records only the backup has join the history.
        writeServiceState(db, CLEAN_STOP_KEY, false);
      }
      heldConfig = undefined;
      starting = undefined;
      this.start();
    },
    status,
    engine: () => engine,
    setup: (input) =>
      exclusive(async () => {
        mustBeOff();
        const config = newConfig(input.relay, input.token, input.name, '');
        const e = await connected(config);
        config.rootUrl = e.createRoot(currentSettings(app), app.clock.now());
        saveSyncConfig(app.db, config);
        // Everything already on this device becomes the start of the history.
        await e.adoptLocalRecords();
        await adopt(e);
        return status();
      }),
    join: (input) =>
      exclusive(async () => {
        mustBeOff();
        const code = decodePairingCode(input.pairing_code);
        const config = newConfig(code.relay, code.token, input.name, code.root);
        const e = await connected(config);
        try {
          await e.openRoot(FIND_ROOT_TIMEOUT_MS);
        } catch (err) {
          await e.close();
          rmSync(syncStorageDir(options.dbPath), { recursive: true, force: true });
          throw new UpstreamError('relay_unreachable', `The relay does not have that history (${String(err instanceof Error ? err.message : err)}). Check that the other device has synced, then try again. Nothing was changed.`);
        }
        saveSyncConfig(app.db, config);
        e.announceDevice(app.clock.now());
        // The history first (no events: it is not news), then what this device had before.
        await e.reprojectAll({ quiet: true });
        await e.adoptLocalRecords();
        await adopt(e);
        return status();
      }),
    pairingCode() {
      const config = mustBeOn({ running: false });
      return encodePairingCode({ relay: config.relayUrl, token: config.relayToken, root: config.rootUrl });
    },
    leave: () =>
      exclusive(async () => {
        // A command runs no engine (oneShot): it opens the history just long enough to say goodbye.
        const config = mustBeOn({ running: !options.oneShot });
        if (!engine) await startEngine(config);
        const e = engine!;
        e.markLeft(app.clock.now());
        await e.waitUntilConfirmed(5000);
        await stopEngine();
        app.bus.write((emit) => {
          clearSyncState(app.db);
          emit('sync.device_left', { object: 'sync.device', device_id: e.config.deviceId, device_name: e.config.deviceName, at: isoUtc(app.clock.now()) });
        });
        // The engine's storage writes nothing after its close (file-storage.ts): gone is gone.
        rmSync(syncStorageDir(options.dbPath), { recursive: true, force: true });
        if (!lastRole) {
          lastRole = true;
          for (const hook of app.hooks.roleChanged) hook();
        }
        return status();
      }),
    becomeWebhookHost() {
      mustBeOn();
      engine!.setWebhookHost(app.clock.now());
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
