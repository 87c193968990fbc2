import type { ServerResponse } from 'node:http';
import type { AppContext } from '../app-context.js';
import { deleteDeliveriesCompletedBefore } from '../db/webhook-deliveries.js';
import { recordDeliveries } from './outbox.js';
import { ATTEMPT_TIMEOUT_MS, Dispatcher, type WebhookNotice } from './dispatcher.js';
import { payloadSchemas, type PayloadDocs } from './payloads.js';

export interface WebhookOptions {
  /** How often the dispatcher looks for due deliveries besides its wake-ups (default 250 ms). */
  pollIntervalMs?: number;
  /** Per-attempt timeout (default and spec: 10 000 ms). Only tests should change it. */
  attemptTimeoutMs?: number;
  /**
   * Attempts in flight at once per subscription (default 32). A slot frees only at the turn that
   * records its outcome, so a subscription delivers at most this many per turn of the event loop;
   * 4 let a burst of events queue for ~0.4 s (bench/webhooks.ts), 24–32 keep its p99 under 40 ms.
   */
  maxInFlightPerSubscription?: number;
  /** Event stream keep-alive comment interval (default 15 000 ms). */
  heartbeatMs?: number;
  /** Finished deliveries are kept in the log this long (default 30 days). */
  retentionDays?: number;
}

export const WEBHOOK_DEFAULTS = {
  pollIntervalMs: 250,
  attemptTimeoutMs: ATTEMPT_TIMEOUT_MS,
  maxInFlightPerSubscription: 32,
  heartbeatMs: 15_000,
  retentionDays: 30,
} as const;

/** Live notices for the app (a subscription disabled, a delivery's status changed). */
export class NoticeHub {
  private readonly listeners = new Set<(n: WebhookNotice) => void>();
  subscribe(fn: (n: WebhookNotice) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }
  publish(n: WebhookNotice): void {
    for (const fn of this.listeners) {
      try {
        fn(n);
      } catch {
        // one broken stream must not stop the others
      }
    }
  }
}

export interface WebhooksSubsystem {
  name: string;
  /** The documents of the bodies delivered, one per event type (the OpenAPI `webhooks`), built on first call. */
  payloads(): PayloadDocs;
  dispatcher: Dispatcher;
  notices: NoticeHub;
  /** Registers an event stream's response, so stop() ends it. */
  trackStream(res: ServerResponse): void;
  /** The options in force (defaults filled in). */
  settings: Required<WebhookOptions>;
  start(): void;
  stop(): Promise<void>;
  pause(): Promise<void>;
  resume(): void;
}

const HOUSEKEEPING_MS = 3600_000;

/**
 * The webhook subsystem: the outbox (deliveries written inside each event's transaction), the
 * dispatcher that attempts them, and the live notices and streams of /v1/events/stream (whose
 * routes, like /v1/webhooks, are in api/routes and are given this subsystem by the service).
 */
export function createWebhooks(app: AppContext, options: WebhookOptions = {}): WebhooksSubsystem {
  const settings = {
    pollIntervalMs: options.pollIntervalMs ?? WEBHOOK_DEFAULTS.pollIntervalMs,
    attemptTimeoutMs: options.attemptTimeoutMs ?? WEBHOOK_DEFAULTS.attemptTimeoutMs,
    maxInFlightPerSubscription: options.maxInFlightPerSubscription ?? WEBHOOK_DEFAULTS.maxInFlightPerSubscription,
    heartbeatMs: options.heartbeatMs ?? WEBHOOK_DEFAULTS.heartbeatMs,
    retentionDays: options.retentionDays ?? WEBHOOK_DEFAULTS.retentionDays,
  };
  const notices = new NoticeHub();
  const dispatcher = new Dispatcher(
    app,
    {
      pollIntervalMs: settings.pollIntervalMs,
      attemptTimeoutMs: settings.attemptTimeoutMs,
      maxInFlightPerSubscription: settings.maxInFlightPerSubscription,
      userAgent: `Chyme-Webhooks/${app.version}`,
    },
    (n) => notices.publish(n),
  );
  const streams = new Set<ServerResponse>();
  const trackStream = (res: ServerResponse) => {
    streams.add(res);
    res.on('close', () => streams.delete(res));
  };

  // In the writing transaction of every event: one outbox row per subscription listing it. With
  // sync, only the webhook host does this (every device records the events; one sends them).
  app.bus.onRecord((db, event) => {
    if (app.role.sendsWebhooks()) recordDeliveries(db, event);
  });

  let unsubscribe: (() => void) | undefined;
  let housekeeping: NodeJS.Timeout | undefined;
  const prune = () => {
    try {
      deleteDeliveriesCompletedBefore(app.db, app.clock.now() - settings.retentionDays * 24 * 3600_000);
    } catch (err) {
      app.log.warn('could not prune the webhook delivery log', { error: String(err) });
    }
  };

  return {
    name: 'webhooks',
    payloads: payloadSchemas,
    dispatcher,
    notices,
    trackStream,
    settings,
    start() {
      // The dispatcher first: if the database is locked it throws before anything else is set up,
      // so the service can call start again later.
      dispatcher.start();
      // After commit: attempt the new deliveries at once.
      unsubscribe = app.bus.subscribe(() => dispatcher.wake());
      prune();
      housekeeping = setInterval(prune, HOUSEKEEPING_MS);
      housekeeping.unref();
    },
    pause: () => dispatcher.pause(),
    resume: () => dispatcher.resume(),
    async stop() {
      unsubscribe?.();
      if (housekeeping) clearInterval(housekeeping);
      for (const res of streams) res.end();
      streams.clear();
      await dispatcher.stop();
    },
  };
}
