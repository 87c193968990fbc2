import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAppContext, replaceDatabase, type AppContext, type Subsystem } from './app-context.js';
import { discardUnfinishedImportsNow } from './imports/imports.js';
import { createApiKey, createLaunchToken } from './auth/keys.js';
import { systemClock, type Clock } from './clock.js';
import { neverWaitInBusyHandler, openDatabase, writeLockHeldElsewhere } from './db/connection.js';
import { attachDerivedCache } from './digestion/cache.js';
import { warmRecentDays } from './digestion/service.js';
import { backupRoutes } from './api/routes/backups.js';
import { backupBeforeMigration, createBackups, type Backups } from './backups/index.js';
import { clearServerInstance, recordServerInstance, runningServer, serverAnswers, ServerAlreadyRunningError } from './backups/instance.js';
import { RestoreBusyError, restoreInService, type RestoreResult } from './backups/service-restore.js';
import { createApiServer, type HttpOptions } from './api/http.js';
import { loadExpress } from './api/express.js';
import { createMcpEndpoint } from './api/mcp.js';
import { buildOpenApi } from './api/openapi.js';
import { defineRoute, type RouteDef } from './api/route.js';
import { eventStreamRoutes } from './api/routes/events-stream.js';
import { resourceRoutes } from './api/routes/index.js';
import { warmUpFoods } from './foods/foods.js';
import { removeStaleUploadDirs } from './imports/uploads.js';
import { webhookRoutes } from './api/routes/webhooks.js';
import { SCOPES } from './auth/scopes.js';
import { WriteGate } from './write-gate.js';
import { createLogger, type Logger } from './logger.js';
import { rendererDir } from './paths.js';
import { createScheduler } from './scheduler/scheduler.js';
import { initSettings } from './settings.js';
import { revokeInternalKeys } from './db/api-keys.js';
import { deleteExpiredUiTokens } from './db/ui-tokens.js';
import { deleteIdempotencyOlderThan } from './db/idempotency.js';
import { createWebhooks, type WebhookOptions, type WebhooksSubsystem } from './webhooks/index.js';
import { mqttRoutes } from './api/routes/mqtt.js';
import { createMqtt, type MqttOptions, type MqttSubsystem } from './mqtt/client.js';
import { syncRoutes } from './api/routes/sync.js';
import { createSync, type SyncOptions, type SyncSubsystem } from './sync/index.js';
import { threadMerger } from './sync/merge-thread.js';

/** The per-key rate limit when none is given (`chyme serve --rate-limit` changes it). */
export { DEFAULT_RATE_LIMIT } from './api/rate-limit.js';

export interface ServiceOptions {
  dbPath: string;
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** IANA zone to store as the user's time zone (the --tz flag). */
  timezone?: string;
  clock?: Clock;
  logger?: Logger;
  /** better-sqlite3 addon built for another ABI (Electron). */
  nativeBinding?: string;
  /** Serve the built renderer at / (default: the package's build/renderer when present). */
  staticDir?: string | null;
  allowedHosts?: string[];
  rateLimit?: HttpOptions['rateLimit'];
  /** How often the scheduler checks for changes caused by time passing (default 1 s). */
  schedulerIntervalMs?: number;
  /**
   * Delay between listening and starting background work (housekeeping, scheduler, dispatcher,
   * cache fill); 0 starts it on the next turn of the event loop.
   */
  deferredStartMs?: number;
  /** Webhook dispatcher and event stream tuning (defaults follow the spec). */
  webhooks?: WebhookOptions;
  /** MQTT reconnect timing (tests shorten it); the settings themselves live in the database. */
  mqtt?: Pick<MqttOptions, 'reconnectFirstMs' | 'reconnectMaxMs'>;
  /** Sync timing (tests shorten the relay retry) and where it merges (tests hold a merge); the set-up itself lives in the database. */
  sync?: Pick<SyncOptions, 'retryMs' | 'connect' | 'merger'>;
  /** Automatic backups (default on) and how often to look whether one is due (default 60 s). */
  backups?: { automatic?: boolean; checkIntervalMs?: number };
  /**
   * When to load the food table (if the shipped one is new) and build its search index after the
   * server listens, in ms (default 1000); null leaves it to the first foods request.
   */
  foodsWarmUpMs?: number | null;
}

export interface Service {
  app: AppContext;
  url: string;
  host: string;
  port: number;
  /** The webhook outbox and dispatcher (tests drive it with dispatcher.runDue()). */
  webhooks: WebhooksSubsystem;
  /** Automatic and on-demand backups of the database. */
  backups: Backups;
  /** The MQTT client (Home Assistant discovery); off until configured. */
  mqtt: MqttSubsystem;
  /** Sync with this person's other devices; off until set up. */
  sync: SyncSubsystem;
  /**
   * Restores a checked copy of a Chyme database into the running service: backs up the current
   * database first, then swaps the file and reopens it (requests get a 503 meanwhile).
   */
  restore(sourcePath: string): Promise<RestoreResult>;
  /** A one-time URL that opens the UI in a browser (CONTRACT §2 "App:" line). */
  createLaunchUrl(): string;
  /** Runs one scheduler check now (tests move the clock, then call this); true when it announced. */
  runScheduler(): boolean;
  /** A full-scope key for the desktop renderer (hidden from key listings). */
  createRendererKey(): string;
  stop(): Promise<void>;
}

const HOUSEKEEPING_INTERVAL_MS = 3600_000;
const FOODS_WARM_UP_DELAY_MS = 1000;
/** An import upload folder untouched this long is a crash's leftover (no upload lasts a day). */
const STALE_UPLOAD_MS = 24 * 3600_000;
/** How long after listening the background work starts (see createService). */
const DEFERRED_START_MS = 200;
/** How long the background work waits at most for the requests that arrived before it (see createService). */
const BACKGROUND_WAIT_LIMIT_MS = 2000;
/** How soon a subsystem that could not start (a locked database) is tried again. */
const SUBSYSTEM_RETRY_MS = 1000;

/**
 * Opens the database, builds the shared context, and starts the HTTP API with every subsystem.
 * Knows nothing of Electron: the desktop shell and `chyme serve` both call this.
 */
export async function createService(options: ServiceOptions): Promise<Service> {
  const clock = options.clock ?? systemClock;
  const log = options.logger ?? createLogger();
  const binding = options.nativeBinding ? { nativeBinding: options.nativeBinding } : {};
  const db = openDatabase(options.dbPath, { ...binding, beforeMigrate: backupBeforeMigration(options.dbPath, log, () => clock.now(), binding) });
  try {
    // One service per database: the desktop app and `chyme serve` on one file would both deliver
    // every webhook. (The same process may start again on its file: a restart in-process.)
    const other = runningServer(db);
    if (other && other.pid !== process.pid && (await serverAnswers(other))) throw new ServerAlreadyRunningError(options.dbPath, other);
    initSettings(db, clock.now(), options.timezone);
  } catch (err) {
    db.close();
    throw err;
  }
  const app: AppContext = createAppContext(db, clock, log, options.nativeBinding);
  // Another program's write lock is waited for on the event loop (neverWaitInBusyHandler, below).
  app.writes = new WriteGate({ lockHeldElsewhere: () => writeLockHeldElsewhere(app.db), clock });
  attachDerivedCache(app);
  // An import cut off by a crash (or in a backup taken while one was being written) is removed
  // whole before anything reads it: imports are all or nothing (server/imports/imports.ts).
  const discardCutOffImports = () => discardUnfinishedImportsNow(app);
  discardCutOffImports();
  app.hooks.databaseReplaced.push(discardCutOffImports);

  const webhooks = createWebhooks(app, options.webhooks);
  const scheduler = createScheduler(app, options.schedulerIntervalMs ? { intervalMs: options.schedulerIntervalMs } : {});
  const backups = createBackups(app, {
    dbPath: options.dbPath,
    ...binding,
    ...options.backups,
  });
  // The MCP server (/mcp): its sessions end when the service stops.
  const mcp = createMcpEndpoint(app);
  
  let url = '';
  const mqtt = createMqtt(app, { ...options.mqtt, serviceUrl: () => url || undefined });
  // First of the subsystems: it decides whether this device is the one that sends webhooks and MQTT.
  // Shards from the relay are merged in a worker thread, not on the one that answers requests.
  const sync = createSync(app, { dbPath: options.dbPath, merger: threadMerger, ...options.sync });
  const subsystems: Subsystem[] = [sync, webhooks, scheduler, backups, mcp, mqtt];
  // Restores run one at a time; every subsystem pauses around the swap.
  let restoring: Promise<RestoreResult> | undefined;
  const restore = (sourcePath: string): Promise<RestoreResult> => {
    if (restoring) return Promise.reject(new RestoreBusyError());
    restoring = restoreInService(
      {
        app,
        dbPath: options.dbPath,
        ...binding,
        backups,
        pause: async () => {
          for (const s of subsystems) await s.pause?.();
        },
        reopen: (fresh) => {
          replaceDatabase(app, fresh);
          recordServerInstance(fresh, url, clock.now());
        },
        resume: () => {
          for (const s of subsystems) s.resume?.();
        },
      },
      sourcePath,
    ).finally(() => {
      restoring = undefined;
    });
    return restoring;
  };
  const routes: RouteDef[] = [
    ...resourceRoutes,
    ...backupRoutes({ backups, dbPath: options.dbPath, restore }),
    ...webhookRoutes({ dispatcher: webhooks.dispatcher }),
    ...mqttRoutes({ mqtt }),
    ...syncRoutes({ sync }),
    ...eventStreamRoutes({ notices: webhooks.notices, trackStream: webhooks.trackStream, heartbeatMs: webhooks.settings.heartbeatMs }),
    mcp.setupRoute,
  ];
  // Built on first request, not at start: generating it is a large share of a cold start.
  let openapi: unknown;
  const openapiDoc = () => (openapi ??= buildOpenApi(routes, app.version, { webhooks: webhooks.payloads() }));
  routes.push(
    defineRoute({
      method: 'GET',
      path: '/v1/openapi.json',
      operationId: 'openapi',
      summary: 'This OpenAPI 3.1 document (no key needed)',
      tag: 'System',
      access: 'public',
      responses: { 200: { description: 'The OpenAPI document' } },
      handler: () => ({ body: openapiDoc() }),
    }),
  );

  const host = options.host ?? '127.0.0.1';
  const staticDir = options.staticDir === null ? undefined : (options.staticDir ?? rendererDir());
  // /mcp is served beside /v1 but is not part of the REST API's OpenAPI document.
  const server = createApiServer(app, [...routes, ...mcp.routes], {
    allowedHosts: [...(options.allowedHosts ?? []), host],
    ...(staticDir ? { staticDir } : {}),
    ...(options.rateLimit ? { rateLimit: options.rateLimit } : {}),
  });

  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 7650, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    // A taken port is not fatal to every caller (the desktop app falls back to another), so leave
    // nothing open behind the rejection.
    db.close();
    throw err;
  }
  const port = (server.address() as AddressInfo).port;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  url = `http://${urlHost}:${port}`;

  // The database is always reached through app.db: a restore replaces it under the running service.
  const housekeeping = () => {
    // An import's worker or another program is writing: this can wait for the next interval.
    if (app.writes.blocked) return;
    const now = clock.now();
    try {
      deleteExpiredUiTokens(app.db, now);
      deleteIdempotencyOlderThan(app.db, now - 24 * 3600_000);
      app.db.pragma('optimize');
    } catch (err) {
      log.warn('housekeeping failed', { error: String(err) });
    }
    // Uploads a crash left beside the database (an import removes its own when it ends).
    void removeStaleUploadDirs(options.dbPath, STALE_UPLOAD_MS).catch((err: unknown) => log.warn('removing old import uploads failed', { error: String(err) }));
  };
  // The food table is loaded (first start, or a new table shipped) and the search index built
  // shortly after start, off the start-up path; a foods request before then does it itself.
  const foodsWarmUpMs = options.foodsWarmUpMs === undefined ? FOODS_WARM_UP_DELAY_MS : options.foodsWarmUpMs;
  // In slices, answering requests between two; stopping ends it between two.
  const foodsWarmUp = new AbortController();
  const foodsTimer =
    foodsWarmUpMs === null
      ? undefined
      : setTimeout(() => {
          warmUpFoods(app, { signal: foodsWarmUp.signal }).catch((err: unknown) => log.error('loading the food table failed', { error: String(err) }));
        }, foodsWarmUpMs);
  foodsTimer?.unref();
  const housekeepingTimer = setInterval(housekeeping, HOUSEKEEPING_INTERVAL_MS);
  housekeepingTimer.unref();

  recordServerInstance(app.db, url, clock.now());
  // Start-up's writes may wait in SQLite's busy handler (nothing is answered yet); from here on
  // none does.
  neverWaitInBusyHandler(app.db);
  // The first request should not wait for work it does not need: housekeeping (PRAGMA optimize),
  // the scheduler's catch-up after downtime, the dispatcher's resumption and filling the
  // derived-data cache all start once the server is answering. The contract gives the scheduler
  // 5 s to notice changes, so starting it a moment late announces nothing late.
  let stopped = false;
  let startRetry: NodeJS.Timeout | undefined;
  // Background work starts after listening, so a storage fault there (another program holding the
  // file locked) must not end the process: what failed to start is tried again a moment later.
  const startSubsystems = (pending: Subsystem[]) => {
    if (stopped) return;
    // Starting writes (the dispatcher's recovery, the scheduler's catch-up): not while an
    // import's worker or another program holds the write lock.
    if (app.writes.blocked) {
      void app.writes.writable({ limitMs: Infinity }).then(() => startSubsystems(pending));
      return;
    }
    const failed = pending.filter((s) => {
      try {
        s.start();
        return false;
      } catch (err) {
        log.error(`starting ${s.name} failed; trying again in ${SUBSYSTEM_RETRY_MS / 1000} s`, { error: String(err) });
        return true;
      }
    });
    if (failed.length > 0) {
      startRetry = setTimeout(() => startSubsystems(failed), SUBSYSTEM_RETRY_MS);
      startRetry.unref();
    }
  };
  let backgroundStarted = false;
  const startBackground = () => {
    if (stopped || backgroundStarted) return;
    backgroundStarted = true;
    server.off('request', countFirstRequests);
    clearTimeout(deferredStart);
    housekeeping();
    startSubsystems(subsystems);
    // Express is left out of the start (api/express.ts); loaded now, no request waits for it.
    void loadExpress().catch((err: unknown) => log.error('loading express failed', { error: String(err) }));
    void warmRecentDays(app).catch((err: unknown) => log.error('filling the derived-data cache failed', { error: String(err) }));
  };
  // Requests that arrived before the background work started are answered before it starts: on a
  // busy machine the first answers of a cold start can take longer than DEFERRED_START_MS, and the
  // work would then run ahead of them on the only thread. A request that stays open (an event
  // stream) holds it back by BACKGROUND_WAIT_LIMIT_MS at most.
  let requestsBeforeStart = 0;
  const countFirstRequests = (_req: IncomingMessage, res: ServerResponse) => {
    requestsBeforeStart++;
    res.once('close', () => {
      if (--requestsBeforeStart === 0 && backgroundDue) startBackground();
    });
  };
  server.on('request', countFirstRequests);
  let backgroundDue = false;
  let deferredStart = setTimeout(() => {
    backgroundDue = true;
    if (requestsBeforeStart === 0) return startBackground();
    deferredStart = setTimeout(startBackground, BACKGROUND_WAIT_LIMIT_MS);
  }, options.deferredStartMs ?? DEFERRED_START_MS);

  let stopping: Promise<void> | undefined;
  return {
    app,
    url,
    host,
    port,
    webhooks,
    backups,
    mqtt,
    sync,
    restore,
    createLaunchUrl: () => `${url}/?token=${createLaunchToken(app.db, clock.now())}`,
    runScheduler: () => scheduler.tick(),
    // One live desktop key at a time: the previous launch's key is revoked, not left to pile up.
    createRendererKey: () =>
      app.db.transaction(() => {
        revokeInternalKeys(app.db, clock.now());
        return createApiKey(app.db, { name: 'Desktop app', scopes: [...SCOPES], nowMs: clock.now(), internal: true }).secret;
      })(),
    stop() {
      stopping ??= (async () => {
        stopped = true;
        clearTimeout(deferredStart);
        clearTimeout(startRetry);
        clearInterval(housekeepingTimer);
        clearTimeout(foodsTimer);
        foodsWarmUp.abort();
        // Stop taking requests and let in-flight ones finish before the database closes.
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        // Stopping the subsystems ends the webhook subsystem's event streams (the only long-lived
        // responses) at once, so their connections are idle when they are closed next.
        await restoring?.catch(() => undefined);
        const subsystemsStopped = Promise.all(subsystems.map((s) => s.stop()));
        server.closeIdleConnections();
        await subsystemsStopped;
        await closed;
        clearServerInstance(app.db, url);
        app.db.close();
      })();
      return stopping;
    },
  };
}
