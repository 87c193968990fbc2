import { setMaxListeners } from 'node:events';
import { Agent } from 'node:http';
import type { AppContext } from '../app-context.js';
import { countFinishedAttempts, finishAttempt, insertAttemptStart, listAttempts, listUnfinishedAttempts } from '../db/webhook-attempts.js';
import {
  cancelPendingDeliveries,
  claimDelivery,
  claimScheduledDelivery,
  completeDelivery,
  getDelivery,
  getDeliveryState,
  listScheduledDeliveries,
  listStrandedDeliveries,
  subscriptionsWithDueWork,
  scheduleDelivery,
  type DeliveryState,
  type DeliveryStatus,
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

/** A delivery taken for an attempt: its attempt row is committed before the request leaves. */
interface Claim {
  delivery: WebhookDeliveryRecord;
  sub: WebhookSubscriptionRecord;
  attempt: number;
  startedMs: number;
}

/** An attempt that has ended; its outcome is committed at the next turn of the loop. */
interface Ended {
  claim: Claim;
  result: SendResult;
  /** Called once the turn's commit has recorded the outcome (or failed: the database closed). */
  settle: () => void;
}

/** One subscription's due deliveries, as read before the turn's transaction claims them. */
interface DueWork {
  subscriptionId: string;
  deliveries: WebhookDeliveryRecord[];
}

/**
 * The outbox worker. Deliveries are rows written in the transaction of the change that caused
 * them; this class makes their attempts, in turns of one transaction each:
 *
 * - A turn commits the outcomes of every attempt that ended since the last turn, and claims every
 *   due delivery the budgets allow (attempt row written, due time cleared), in one commit; only
 *   then do the claimed requests leave. So an attempt is recorded before it is sent, and a 2xx
 *   marks the delivery succeeded in the commit that records it: a delivery recorded as succeeded
 *   is never sent again. An attempt in flight when the process dies, or ended but not yet
 *   recorded, has no outcome at restart: it is marked interrupted and retried at once
 *   (at-least-once). One commit per turn instead of two per attempt is what lets a burst of
 *   events fan out at thousands of attempts a second on the single thread.
 * - The next attempt is due RETRY_DELAYS_MS[n-1] after attempt n ended, by the injected clock.
 * - Each subscription has its own in-flight budget (an attempt holds its slot until its outcome
 *   is committed), and a subscription at its budget is never queried, so a slow or dead receiver
 *   holds up nobody else. Nothing here runs in a request: the API only writes rows and wakes the
 *   loop.
 */
export class Dispatcher {
  /** Attempts claimed and not yet recorded, by delivery id; each settles when its outcome is committed. */
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly perSubscription = new Map<string, number>();
  /**
   * One keep-alive agent per subscription (http: receivers): an attempt reuses a connection a
   * previous one left open instead of opening its own, which capped fan-out. Closed on stop/pause.
   */
  private readonly agents = new Map<string, Agent>();
  /** Receiver URLs parsed once, not per attempt. */
  private readonly targets = new Map<string, URL>();
  /** Attempts that ended since the last turn, waiting for it to record them. */
  private ended: Ended[] = [];
  private aborter = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private turnQueued = false;
  private waitingForWrites = false;
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
    this.turn(false);
  }

  /** Looks for due work soon (after an event is committed, or a subscription enabled). */
  wake(): void {
    if (this.stopped || this.paused || !this.started) return;
    this.queueTurn();
  }

  /** Starts every due attempt the budgets allow and waits until no attempt is in flight (tests). */
  async runDue(): Promise<void> {
    this.turn(true);
    await this.idle();
  }

  /** Resolves when no attempt is in flight (every one that ended is recorded). */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight.values()]);
  }

  /** Attempts in flight right now. */
  get inFlightCount(): number {
    return this.inFlight.size;
  }

  /**
   * Makes one attempt of a delivery now, whatever its schedule (the test endpoint), and resolves
   * once its outcome is recorded. The delivery must be pending with no due time, i.e. just
   * inserted by the caller.
   */
  async attemptNow(deliveryId: string): Promise<AttemptReport | undefined> {
    const { db, clock } = this.app;
    const delivery = getDelivery(db, deliveryId);
    if (!delivery || delivery.status !== 'pending' || this.inFlight.has(deliveryId)) return undefined;
    const startedMs = clock.now();
    const claim = relaxedCommit(db, (): Claim | undefined => {
      const sub = getSubscription(db, delivery.subscriptionId);
      const attempt = sub && claimDelivery(db, delivery.id);
      if (!sub || attempt === undefined) return undefined;
      insertAttemptStart(db, delivery.id, attempt, startedMs);
      return { delivery, sub, attempt, startedMs };
    });
    if (!claim) return undefined;
    let result: SendResult | undefined;
    await this.send(claim, (r) => (result = r));
    return result && { deliveryId, result };
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
    setMaxListeners(0, this.aborter.signal);
    this.recover();
    this.turn(false);
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

  private targetFor(url: string): URL {
    let target = this.targets.get(url);
    if (!target) {
      if (this.targets.size >= 100) this.targets.clear(); // URLs edited many times over a long run
      target = new URL(url);
      this.targets.set(url, target);
    }
    return target;
  }

  private closeConnections(): void {
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
    this.targets.clear();
  }

  /** A turn at the next check phase of the event loop: the attempts ending meanwhile share it. */
  private queueTurn(): void {
    if (this.turnQueued) return;
    this.turnQueued = true;
    setImmediate(() => {
      this.turnQueued = false;
      this.turn(false);
    });
  }

  /**
   * One turn: records the attempts that ended and claims the due deliveries, in one commit, then
   * sends what it claimed and sets the timer for the next due attempt. Claims only while running
   * (or when a test asks, `claim`); outcomes are recorded even while stopping or pausing.
   */
  private turn(claim: boolean): void {
    if (this.app.writes.blocked) {
      // An import's worker or another program holds the write lock: the turn (and the outcomes
      // it records) waits for it on the event loop, however long, without holding the thread.
      if (!this.waitingForWrites) {
        this.waitingForWrites = true;
        void this.app.writes.writable({ limitMs: Infinity }).then(() => {
          this.waitingForWrites = false;
          this.turn(claim);
        });
      }
      return;
    }
    const { db, clock, log } = this.app;
    const ended = this.ended;
    this.ended = [];
    // Their slots are free for this turn's claims: the commit that records them claims anew.
    for (const e of ended) this.release(e.claim.sub.id);
    const running = !this.stopped && !this.paused && this.started;
    const claiming = !this.stopped && !this.paused && (this.started || claim);
    const now = clock.now();
    let due: DueWork[] = [];
    let nextDueMs: number | undefined;
    if (claiming) {
      try {
        ({ due, nextDueMs } = this.findDue(now));
      } catch (err) {
        // The database may be closing; the next turn tries again.
        log.error('webhook dispatcher could not look for due deliveries', { error: String(err) });
      }
    }
    let claims: Claim[] = [];
    let afterCommit: Array<() => void> = [];
    if (ended.length > 0 || due.length > 0) {
      try {
        relaxedCommit(db, () => {
          for (const e of ended) this.record(e, now, afterCommit);
          claims = this.claimDue(due, now);
        });
      } catch (err) {
        // The database closed under us (shutdown): those attempts stay unfinished and are retried
        // on restart; nothing was claimed.
        claims = [];
        afterCommit = [];
        log.warn('could not record webhook attempts', { attempts: ended.length, error: String(err) });
      }
    }
    for (const e of ended) e.settle();
    for (const fn of afterCommit) fn();
    for (const c of claims) void this.send(c);
    if (running) this.arm(nextDueMs);
  }

  /** Sleeps until the next due attempt (retry waits are kept to the millisecond), at most one poll interval. */
  private arm(nextDueMs: number | undefined): void {
    if (this.timer) clearTimeout(this.timer);
    const poll = this.options.pollIntervalMs;
    // Something may have become due since the turn looked (or a timer fired a hair early by the
    // clock's reckoning): look again in 1 ms rather than a whole poll interval later.
    const wait = nextDueMs === undefined ? poll : nextDueMs - this.app.clock.now();
    this.timer = setTimeout(() => this.turn(false), Math.max(1, Math.min(poll, wait)));
    this.timer.unref();
  }

  /**
   * Each enabled subscription with free slots, asked through its own index for as many deliveries
   * as its slots can take: a receiver that hangs (slots full, backlog growing) costs the others
   * nothing. Deliveries held back by a budget start when a slot frees (that turn looks again).
   */
  private findDue(now: number): { due: DueWork[]; nextDueMs: number | undefined } {
    const due: DueWork[] = [];
    let nextDueMs: number | undefined;
    for (const subscriptionId of subscriptionsWithDueWork(this.app.db)) {
      const free = this.options.maxInFlightPerSubscription - (this.perSubscription.get(subscriptionId) ?? 0);
      if (free <= 0) continue;
      const deliveries: WebhookDeliveryRecord[] = [];
      for (const d of listScheduledDeliveries(this.app.db, subscriptionId, free)) {
        const at = d.nextAttemptMs!;
        if (at > now) {
          if (nextDueMs === undefined || at < nextDueMs) nextDueMs = at;
          break;
        }
        if (!this.inFlight.has(d.id)) deliveries.push(d);
      }
      if (deliveries.length > 0) due.push({ subscriptionId, deliveries });
    }
    return { due, nextDueMs };
  }

  /** In the turn's transaction: takes the due deliveries still pending and scheduled. */
  private claimDue(due: DueWork[], now: number): Claim[] {
    const { db } = this.app;
    const claims: Claim[] = [];
    for (const { subscriptionId, deliveries } of due) {
      const sub = getSubscription(db, subscriptionId);
      // Deleted or disabled since it was read (by an outcome of this turn, or another process).
      if (!sub || sub.status !== 'enabled') continue;
      for (const delivery of deliveries) {
        const attempt = claimScheduledDelivery(db, delivery.id);
        if (attempt === undefined) continue;
        insertAttemptStart(db, delivery.id, attempt, now);
        claims.push({ delivery, sub, attempt, startedMs: now });
      }
    }
    return claims;
  }

  private release(subscriptionId: string): void {
    const n = (this.perSubscription.get(subscriptionId) ?? 1) - 1;
    if (n <= 0) this.perSubscription.delete(subscriptionId);
    else this.perSubscription.set(subscriptionId, n);
  }

  /**
   * Sends a claimed attempt (its slot is taken until its outcome is recorded); resolves once the
   * outcome is committed. `onResult` hears the outcome as soon as it is known.
   */
  private send(claim: Claim, onResult?: (result: SendResult) => void): Promise<void> {
    const id = claim.delivery.id;
    this.perSubscription.set(claim.sub.id, (this.perSubscription.get(claim.sub.id) ?? 0) + 1);
    let settle!: () => void;
    const recorded = new Promise<void>((resolve) => (settle = resolve));
    this.inFlight.set(id, recorded);
    const end = (result: SendResult) => {
      onResult?.(result);
      this.ended.push({
        claim,
        result,
        settle: () => {
          this.inFlight.delete(id);
          settle();
        },
      });
      this.queueTurn();
    };
    const unexpected = (err: unknown): SendResult => {
      this.app.log.error('webhook attempt failed unexpectedly', { delivery: id, error: String((err as Error)?.stack ?? err) });
      return { ok: false, statusCode: null, error: `internal error: ${String((err as Error)?.message ?? err)}`, durationMs: 0, interrupted: false, peerCertificateSha256: null };
    };
    let sending: Promise<SendResult>;
    try {
      sending = this.post(claim);
    } catch (err) {
      sending = Promise.resolve(unexpected(err));
    }
    sending.then(end, (err: unknown) => end(unexpected(err)));
    return recorded;
  }

  /** The HTTP request of an attempt, signed afresh with the attempt's own timestamp. */
  private post({ delivery, sub, startedMs }: Claim): Promise<SendResult> {
    const secrets = [sub.secret];
    if (sub.previousSecret && sub.previousSecretExpiresMs !== null && sub.previousSecretExpiresMs > startedMs) {
      secrets.push(sub.previousSecret);
    }
    const body = Buffer.from(delivery.body, 'utf8');
    const headers = {
      'Content-Type': 'application/json',
      'User-Agent': this.options.userAgent,
      [SIGNATURE_HEADER]: signatureHeader(body, secrets, Math.floor(startedMs / 1000)),
      'X-Webhook-Delivery-Id': delivery.id,
      'X-Webhook-Event': delivery.eventType,
    };
    return postOnce(this.targetFor(sub.url), body, headers, {
      timeoutMs: this.options.attemptTimeoutMs,
      signal: this.aborter.signal,
      pinnedCertificateSha256: sub.tlsPinSha256,
      keepAliveAgent: this.agentFor(sub.id),
    });
  }

  /**
   * In the turn's transaction: an attempt's outcome and what follows from it (success, the next
   * retry, or failure and maybe the subscription's disabling). Notices go out after the commit.
   */
  private record({ claim, result }: Ended, now: number, afterCommit: Array<() => void>): void {
    const { db } = this.app;
    const current = getDeliveryState(db, claim.delivery.id);
    if (!current) return; // its subscription was deleted meanwhile
    finishAttempt(db, {
      deliveryId: current.id,
      attempt: claim.attempt,
      finishedMs: result.interrupted ? null : now,
      outcome: result.interrupted ? 'interrupted' : result.ok ? 'succeeded' : 'failed',
      statusCode: result.statusCode,
      durationMs: result.durationMs,
      error: result.error,
      peerCertificateSha256: result.peerCertificateSha256,
    });
    if (result.peerCertificateSha256) setSeenCertificate(db, current.subscriptionId, result.peerCertificateSha256, now);
    let status: DeliveryStatus = current.status;
    let disabled: WebhookSubscriptionRecord | undefined;
    if (result.ok) {
      // Delivered wins over everything, even a cancellation that raced with this attempt.
      completeDelivery(db, current.id, 'succeeded', now);
      setFailingSince(db, current.subscriptionId, null);
      status = 'succeeded';
    } else if (current.status === 'pending') {
      if (result.interrupted) {
        if (current.kind === 'test') {
          completeDelivery(db, current.id, 'failed', now, 'interrupted: the service stopped');
          status = 'failed';
        } else {
          scheduleDelivery(db, current.id, now);
        }
      } else {
        const finished = countFinishedAttempts(db, current.id);
        if (finished >= current.maxAttempts || current.attemptCount >= current.maxAttempts + MAX_INTERRUPTED_ATTEMPTS) {
          completeDelivery(db, current.id, 'failed', now, `no 2xx after ${finished} attempt${finished === 1 ? '' : 's'}`);
          status = 'failed';
          if (current.eventType !== 'test.ping') disabled = this.noteFailure(current, now);
        } else {
          scheduleDelivery(db, current.id, now + RETRY_DELAYS_MS[finished - 1]!);
        }
      }
    }
    afterCommit.push(() =>
      this.notify({
        type: 'webhook_delivery.updated',
        object: { object: 'webhook_delivery', id: current.id, subscription_id: current.subscriptionId, status },
      }),
    );
    if (disabled) {
      const sub = disabled;
      afterCommit.push(() => {
        this.app.log.warn('webhook subscription disabled after 3 days of failed deliveries', { subscription: sub.id, url: sub.url });
        this.notify({
          type: 'webhook_subscription.disabled',
          object: { object: 'webhook_subscription', id: sub.id, url: sub.url, status: sub.status, disabled_reason: sub.disabledReason },
        });
      });
    }
  }

  /**
   * A delivery ran out of attempts: the subscription's failing run starts (if not already) at
   * that delivery's first attempt, and a run of 3 days disables the subscription.
   */
  private noteFailure(delivery: Pick<DeliveryState, 'id' | 'subscriptionId' | 'createdMs'>, now: number): WebhookSubscriptionRecord | undefined {
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
