import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import type { TestService } from '../helpers/service.js';

/** One request a test receiver got. */
/**
 * How long a receiver waits for requests it expects before failing. Only a failure waits this long,
 * so it is sized for a machine whose cores are both busy, not for a quiet one.
 */
const WAIT_MS = 20_000;

export interface Received {
  index: number;
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  json: any;
  /** Real time (Date.now()) when the request arrived. */
  at: number;
  /** The sender's port: requests with the same one came over the same connection. */
  remotePort: number | undefined;
}

export interface Reply {
  status?: number;
  headers?: Record<string, string>;
  body?: string;
  /** Never answer (the connection is held until the receiver closes). */
  hang?: boolean;
}

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** Resolves once `n` requests have arrived (rejects after timeoutMs). */
  waitFor(n: number, timeoutMs?: number): Promise<Received[]>;
  /** Resolves once `pred` holds for the requests received so far. */
  waitUntil(pred: (received: Received[]) => boolean, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

export interface ReceiverOptions {
  /** Serve HTTPS with this key and certificate (PEM) instead of HTTP. */
  tls?: { key: string; cert: string };
}

/** A real HTTP(S) receiver on 127.0.0.1; `reply` decides each answer (default 200). */
export async function startReceiver(reply: (r: Received) => Reply = () => ({ status: 200 }), options: ReceiverOptions = {}): Promise<Receiver> {
  const received: Received[] = [];
  const held = new Set<ServerResponse>();
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: any;
      try {
        json = JSON.parse(body);
      } catch {
        json = undefined;
      }
      const r: Received = { index: received.length, method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, json, at: Date.now(), remotePort: req.socket.remotePort };
      received.push(r);
      const answer = reply(r);
      for (const w of [...waiters]) if (received.length >= w.n) w.resolve();
      if (answer.hang) {
        held.add(res);
        return;
      }
      res.writeHead(answer.status ?? 200, answer.headers ?? {});
      res.end(answer.body ?? 'ok');
    });
  };
  const server = options.tls ? createHttpsServer({ key: options.tls.key, cert: options.tls.cert }, handle) : createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}/hook`,
    port,
    received,
    waitFor(n, timeoutMs = WAIT_MS) {
      if (received.length >= n) return Promise.resolve(received);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`receiver got ${received.length} of ${n} requests in ${timeoutMs} ms`)), timeoutMs);
        waiters.push({
          n,
          resolve: () => {
            clearTimeout(timer);
            resolve(received);
          },
        });
      });
    },
    async waitUntil(pred, timeoutMs = WAIT_MS) {
      const start = Date.now();
      while (!pred(received)) {
        if (Date.now() - start > timeoutMs) throw new Error(`receiver condition not met in ${timeoutMs} ms; got ${received.map((r) => r.json?.type).join(', ')}`);
        await sleep(10);
      }
      return received;
    },
    async close() {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Verifies a delivery with Stripe's SDK, an independent implementation of the same scheme. */
export function stripeVerifies(r: Received, secret: string, nowMs: number): boolean {
  try {
    // receivedAt (the 6th argument) exists at runtime but not in Stripe's type declarations.
    const verifyHeader = Stripe.webhooks.signature.verifyHeader as unknown as (...args: unknown[]) => boolean;
    verifyHeader.call(Stripe.webhooks.signature, r.body, String(r.headers['x-service-signature']), secret, 300, undefined, nowMs);
    return true;
  } catch {
    return false;
  }
}

export async function createSubscription(
  t: TestService,
  body: { url: string; events: string[]; secret?: string; tls_certificate_sha256?: string | null },
): Promise<{ id: string; secret: string; [k: string]: any }> {
  const res = await t.request('POST', '/v1/webhooks', { body });
  if (res.status !== 201) throw new Error(`create webhook failed: ${res.status} ${res.text}`);
  return res.body;
}

export const MEAL = { timestamp: '2026-11-22T11:30:00Z', meal_type: 'lunch', description: 'Lentil soup', macros: { calories: 420, protein_g: 21, carbs_g: 55, fat_g: 9 } };

/** Runs due attempts, moving the manual clock to each next due time, until nothing is pending. */
export async function drainWithClock(t: TestService, maxRounds = 20): Promise<void> {
  for (let i = 0; i < maxRounds; i++) {
    await t.service.webhooks.dispatcher.runDue();
    const next = t.service.app.db
      .prepare("SELECT MIN(next_attempt_ms) AS t FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_ms IS NOT NULL")
      .get() as { t: number | null };
    if (next.t === null) return;
    if (next.t > t.clock.now()) t.clock.set(next.t);
  }
  throw new Error('deliveries still pending after many rounds');
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
