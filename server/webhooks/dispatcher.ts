import { setMaxListeners } from 'node:events';
import { Agent } from 'node:http';
import type { AppContext } from '../app-context.js';
import { countFinishedAttempts, finishAttempt, insertAttemptStart, listAttempts, listUnfinishedAttempts } from '../db/webhook-attempts.js';
import {
  cancelPendingDeliveries,
  claimDelivery,
  completeDelivery,
  getDelivery,
  listDueDeliveries,
  listStrandedDeliveries,
  nextDueMs,
  subscriptionsWithDueWork,
  scheduleDelivery,
  type WebhookDeliveryRecord,
} from '../db/webhook-deliveries.js';
import {
  getSubscription,
  setFailingSince,
  setSeenCertificate,
  updateSubscription,
  type WebhookSubscriptionRecord,
} from '../db/webhook-subscriptions.js';
import { relaxedCommit } from '../db/connection.js';
import { isoUtc } from '../time/tz.js';
import { postOnce, type SendResult } from './send.js';
import { SIGNATURE_HEADER, signatureHeader } from './sign.js';

/** Spec "Retry policy": waits after attempts 1..5; 6 attempts in all; 10 s per attempt. */
export const RETRY_DELAYS_MS: readonly number[] = [1000, 2000, 4000, 8000, 16000];
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;
export const ATTEMPT_TIMEOUT_MS = 10_000;
/** CONTRACT §7: a subscription whose deliveries all failed for 3 days is disabled. */
export const AUTO_DISABLE_AFTER_MS = 3 * 24 * 3600_000;
/** Attempts cut short by a stop/crash are retried without counting; this bounds a crash loop. */
const MAX_INTERRUPTED_ATTEMPTS = 4;

export interface DispatcherOptions {
  /** How often to look for due deliveries besides the wake-ups (ms). */
  pollIntervalMs: number;
  attemptTimeoutMs: number;
  /** Attempts in flight at once for one subscription (others are never held up by it). */
  maxInFlightPerSubscription: number;
  userAgent: string;
}

/** Something the app may want to show live (sent on the event stream to webhooks:read holders). */
export interface WebhookNotice {
  type: 'webhook_delivery.updated' | 'webhook_subscription.disabled';
  object: Record<string, unknown>;
}

export interface AttemptReport {
  deliveryId: string;
  result: SendResult;
}

/**
 * The outbox worker. Deliveries are rows written in the transaction of the change that caused
 * them; this class makes their attempts:
 *
 * - An attempt is recorded (attempt row, due time cleared) before the request leaves, and its
 *   outcome after; a 2xx marks the delivery succeeded in the same transaction, so a delivery
 *   recorded as succeeded is never sent again. An attempt in flight when the process dies has no
 *   outcome at restart: it is marked interrupted and retried at once (at-least-once).
 * - The next attempt is due RETRY_DELAYS_MS[n-1] after attempt n ended, by the injected clock.
 * - Each subscription has its own in-flight budget, and a due query never returns deliveries of a
 *   subscription at its budget, so a slow or dead receiver holds up nobody else. Nothing here
 *   runs in a request: the API only writes rows and wakes the loop.
 */
export class Dispatcher {
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly perSubscription = new Map<string, number>();
  /**
   * One keep-alive agent per subscription (http: receivers): an attempt reuses a connection a
   * previous one left open instead of opening its own, which capped fan-out. Closed on stop/pause.
   */
  private readonly agents = new Map<string, Agent>();
  private aborter = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private wakeQueued = false;
  private started = false;
  private stopped = false;
  private paused = false;

  constructor(
    private readonly app: AppContext,
    private readonly options: DispatcherOptions,
    private readonly notify: (notice: WebhookNotice) => void = () => {},
  ) {
    // Every attempt in flight listens for the stop signal; hundreds at once are expected.
    setMaxListeners(0, this.aborter.signal);
  }

  /** Recovers attempts a crash cut short, then starts the loop. */
  start(): void {
    if (this.started) return;
    // Recover first: when the file is locked it throws and start can simply be called again.
    this.recover();
    this.started = true;
    this.tick();
  }

  /** Looks for due work soon (after an event is committed, or an attempt ends). */
  wake(): void {
    if (this.stopped || this.paused || !this.started || this.wakeQueued) return;
    this.wakeQueued = true;
    setImmediate(() => {
      this.wakeQueued = false;
      this.tick();
    });
  }

  /** Starts every due attempt the budgets allow and waits until no attempt is in flight (tests). */
  async runDue(): Promise<void> {
    this.startDue();
    await this.idle();
  }

  /** Resolves when no attempt is in flight. */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight.values()]);
  }

  /** Attempts in flight right now. */
  get inFlightCount(): number {
    return this.inFlight.size;
  }

  /**
   * Makes one attempt of a delivery now, whatever its schedule (the test endpoint). The delivery
   * must be pending with no due time, i.e. just inserted by the caller.
   */
  async attemptNow(deliveryId: string): Promise<AttemptReport | undefined> {
    const delivery = getDelivery(this.app.db, deliveryId);
    if (!delivery || delivery.status !== 'pending') return undefined;
    let report: AttemptReport | undefined;
    await this.track(delivery, async () => {
      report = await this.attempt(delivery);
    });
    return report;
  }

  /** Stops the loop and interrupts attempts in flight (they are retried after the next start). */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.aborter.abort();
    await this.idle();
    this.closeConnections();
  }

  /**
   * Interrupts attempts in flight (recorded as interrupted, retried on resume) and holds the loop
   * until resume(): a restore swaps the database under the dispatcher.
   */
  async pause(): Promise<void> {
    if (this.stopped || this.paused) return;
    this.paused = true;
    if (this.timer) clearTimeout(this.timer);
    this.aborter.abort();
    await this.idle();
    this.closeConnections();
  }

  /** Picks up the (possibly different) database's outbox where it stands and starts the loop again. */
  resume(): void {
    if (this.stopped || !this.paused) return;
    this.paused = false;
    this.aborter = new AbortController();
    this.recover();
    this.tick();
  }

  // ---- internals ----------------------------------------------------------------------------

  private agentFor(subscriptionId: string): Agent {
    let agent = this.agents.get(subscriptionId);
    if (!agent) {
      // As many connections as the subscription may have attempts in flight; Node closes an idle
      // one before the receiver's advertised keep-alive timeout runs out.
      agent = new Agent({ keepAlive: true, maxSockets: this.options.maxInFlightPerSubscription });
      this.agents.set(subscriptionId, agent);
    }
    return agent;
  }

  private closeConnections(): void {
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
  }

  private tick(): void {
    if (this.stopped || this.paused) return;
    if (this.timer) clearTimeout(this.timer);
    try {
      this.startDue();
    } catch (err) {
      this.app.log.error('webhook dispatcher failed to start due deliveries', { error: String(err) });
    }
    let delay = this.options.pollIntervalMs;
    try {
      // Sleep until the next due attempt (retry waits are kept to the millisecond), at most one
      // poll interval. Deliveries held back by a subscription's budget start when a slot frees.
      let next: number | undefined;
      for (const sub of this.subscriptionsWithFreeSlots()) {
        const due = nextDueMs(this.app.db, sub);
        if (due !== undefined && (next === undefined || due < next)) next = due;
      }
      // Something may have become due since startDue looked (or a timer fired a hair early by
      // the clock's reckoning): look again in 1 ms rather than a whole poll interval later.
      const wait = next === undefined ? delay : next - this.app.clock.now();
      delay = Math.max(1, Math.min(delay, wait));
    } catch {
      // The database may be closing; the next tick tries again.
    }
    this.timer = setTimeout(() => this.tick(), delay);
    this.timer.unref();
  }

  /** Starts due attempts within each subscription's budget; returns how many started. */
  private startDue(): number {
    if (this.stopped || this.paused) return 0;
    let started = 0;
    const now = this.app.clock.now();
    // Each subscription is asked only for what its free slots can take, through its own index:
    // a receiver that hangs (slots full, backlog growing) costs the others nothing.
    for (const sub of this.subscriptionsWithFreeSlots()) {
      const free = this.options.maxInFlightPerSubscription - (this.perSubscription.get(sub) ?? 0);
      for (const delivery of listDueDeliveries(this.app.db, sub, now, free)) {
        if (this.inFlight.has(delivery.id)) continue;
        void this.track(delivery, () => this.attempt(delivery).then(() => undefined));
        started++;
      }
    }
    return started;
  }

  /** Enabled subscriptions with due work and an attempt slot free. */
  private subscriptionsWithFreeSlots(): string[] {
    return subscriptionsWithDueWork(this.app.db).filter((id) => (this.perSubscription.get(id) ?? 0) < this.options.maxInFlightPerSubscription);
  }

  private track(delivery: WebhookDeliveryRecord, work: () => Promise<unknown>): Promise<void> {
    const sub = delivery.subscriptionId;
    this.perSubscription.set(sub, (this.perSubscription.get(sub) ?? 0) + 1);
    const run = (async () => {
      try {
        await work();
      } catch (err) {
        this.app.log.error('webhook attempt failed unexpectedly', { delivery: delivery.id, error: String((err as Error)?.stack ?? err) });
      } finally {
        const n = (this.perSubscription.get(sub) ?? 1) - 1;
        if (n <= 0) this.perSubscription.delete(sub);
        else this.perSubscription.set(sub, n);
        this.inFlight.delete(delivery.id);
        this.wake();
      }
    })();
    this.inFlight.set(delivery.id, run);
    return run;
  }

  /** One attempt: record its start, send, record its outcome and what follows from it. */
  private async attempt(delivery: WebhookDeliveryRecord): Promise<AttemptReport | undefined> {
    const { db, clock } = this.app;
    const startedMs = clock.now();
    const claimed = relaxedCommit(db, () => {
      const current = getDelivery(db, delivery.id);
      const sub = current && getSubscription(db, current.subscriptionId);
      if (!current || !sub || current.status !== 'pending') return undefined;
      const attempt = claimDelivery(db, current.id);
      insertAttemptStart(db, current.id, attempt, startedMs);
      return { current, sub, attempt };
    });
    if (!claimed) return undefined;
    const { current, sub, attempt } = claimed;

    const secrets = [sub.secret];
    if (sub.previousSecret && sub.previousSecretExpiresMs !== null && sub.previousSecretExpiresMs > startedMs) {
      secrets.push(sub.previousSecret);
    }
    // Signed afresh for every attempt, with the attempt's own timestamp.
    const headers = {
      'Content-Type': 'application/json',
      'User-Agent': this.options.userAgent,
      [SIGNATURE_HEADER]: signatureHeader(current.body, secrets, Math.floor(startedMs / 1000)),
      'X-Webhook-Delivery-Id': current.id,
      'X-Webhook-Event': current.eventType,
    };
    const result = await postOnce(sub.url, current.body, headers, {
      timeoutMs: this.options.attemptTimeoutMs,
      signal: this.aborter.signal,
      pinnedCertificateSha256: sub.tlsPinSha256,
      keepAliveAgent: this.agentFor(sub.id),
    });
    this.record(current, attempt, result);
    return { deliveryId: current.id, result };
  }

  private record(delivery: WebhookDeliveryRecord, attempt: number, result: SendResult): void {
    const { db, clock } = this.app;
    const now = clock.now();
    let disabled: WebhookSubscriptionRecord | undefined;
    let changed: WebhookDeliveryRecord | undefined;
    try {
      relaxedCommit(db, () => {
        const current = getDelivery(db, delivery.id);
        if (!current) return; // its subscription was deleted meanwhile
        finishAttempt(db, {
          deliveryId: current.id,
          attempt,
          finishedMs: result.interrupted ? null : now,
          outcome: result.interrupted ? 'interrupted' : result.ok ? 'succeeded' : 'failed',
          statusCode: result.statusCode,
          durationMs: result.durationMs,
          error: result.error,
          peerCertificateSha256: result.peerCertificateSha256,
        });
        if (result.peerCertificateSha256) setSeenCertificate(db, current.subscriptionId, result.peerCertificateSha256, now);
        if (result.ok) {
          // Delivered wins over everything, even a cancellation that raced with this attempt.
          completeDelivery(db, current.id, 'succeeded', now);
          setFailingSince(db, current.subscriptionId, null);
        } else if (current.status === 'pending') {
          if (result.interrupted) {
            if (current.kind === 'test') completeDelivery(db, current.id, 'failed', now, 'interrupted: the service stopped');
            else scheduleDelivery(db, current.id, now);
          } else {
            const finished = countFinishedAttempts(db, current.id);
            if (finished >= current.maxAttempts || current.attemptCount >= current.maxAttempts + MAX_INTERRUPTED_ATTEMPTS) {
              completeDelivery(db, current.id, 'failed', now, `no 2xx after ${finished} attempt${finished === 1 ? '' : 's'}`);
              if (current.eventType !== 'test.ping') disabled = this.noteFailure(current, now);
            } else {
              scheduleDelivery(db, current.id, now + RETRY_DELAYS_MS[finished - 1]!);
            }
          }
        }
        changed = getDelivery(db, current.id);
      });
    } catch (err) {
      // The database closed under us (shutdown): the attempt stays unfinished and is retried on restart.
      this.app.log.warn('could not record a webhook attempt', { delivery: delivery.id, error: String(err) });
      return;
    }
    if (changed) {
      this.notify({
        type: 'webhook_delivery.updated',
        object: { object: 'webhook_delivery', id: changed.id, subscription_id: changed.subscriptionId, status: changed.status },
      });
    }
    if (disabled) {
      this.app.log.warn('webhook subscription disabled after 3 days of failed deliveries', { subscription: disabled.id, url: disabled.url });
      this.notify({
        type: 'webhook_subscription.disabled',
        object: {
          object: 'webhook_subscription',
          id: disabled.id,
          url: disabled.url,
          status: disabled.status,
          disabled_reason: disabled.disabledReason,
        },
      });
    }
  }

  /**
   * A delivery ran out of attempts: the subscription's failing run starts (if not already) at
   * that delivery's first attempt, and a run of 3 days disables the subscription.
   */
  private noteFailure(delivery: WebhookDeliveryRecord, now: number): WebhookSubscriptionRecord | undefined {
    const { db } = this.app;
    const first = listAttempts(db, delivery.id)[0];
    setFailingSince(db, delivery.subscriptionId, first?.startedMs ?? delivery.createdMs);
    const sub = getSubscription(db, delivery.subscriptionId);
    if (!sub || sub.status !== 'enabled' || sub.failingSinceMs === null) return undefined;
    if (now - sub.failingSinceMs < AUTO_DISABLE_AFTER_MS) return undefined;
    const disabled: WebhookSubscriptionRecord = {
      ...sub,
      status: 'disabled',
      disabledMs: now,
      disabledReason: `Disabled automatically: every delivery to this URL failed from ${isoUtc(sub.failingSinceMs)} to ${isoUtc(now)} (3 days). Fix the receiver, send a test, then enable the webhook again.`,
      updatedMs: now,
    };
    updateSubscription(db, disabled);
    cancelPendingDeliveries(db, sub.id, now, 'canceled: the subscription was disabled automatically');
    return disabled;
  }

  /** After a crash: attempts without an outcome were interrupted; their deliveries are due now. */
  private recover(): void {
    const { db, clock } = this.app;
    const now = clock.now();
    let resumed = 0;
    db.transaction(() => {
      for (const a of listUnfinishedAttempts(db)) {
        finishAttempt(db, {
          deliveryId: a.deliveryId,
          attempt: a.attempt,
          finishedMs: null,
          outcome: 'interrupted',
          statusCode: null,
          durationMs: null,
          error: 'interrupted: the service stopped before this attempt finished; it was retried after restart',
          peerCertificateSha256: null,
        });
      }
      for (const d of listStrandedDeliveries(db)) {
        if (d.kind === 'test') completeDelivery(db, d.id, 'failed', now, 'interrupted: the service stopped');
        else scheduleDelivery(db, d.id, now);
        resumed++;
      }
    }).immediate();
    if (resumed > 0) this.app.log.info('resuming webhook deliveries interrupted by a stop', { deliveries: resumed });
  }
}
