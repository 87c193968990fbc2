import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApiKey } from '../../server/auth/keys.js';
import { ManualClock } from '../../server/clock.js';
import { SCOPES, type Scope } from '../../server/auth/scopes.js';
import { silentLogger } from '../../server/logger.js';
import { createService, type Service, type ServiceOptions } from '../../server/service.js';

/** A fixed "now" for tests: Sunday 22 Nov 2026, 12:00 UTC. */
export const TEST_NOW = Date.UTC(2026, 10, 22, 12, 0, 0);

export interface HttpReply<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  body?: unknown;
  /** Raw body text (sent as is, e.g. malformed JSON). */
  rawBody?: string;
  key?: string | null;
  headers?: Record<string, string>;
}

export interface TestService {
  service: Service;
  clock: ManualClock;
  baseUrl: string;
  dir: string;
  dbPath: string;
  /** A key holding every scope. */
  adminKey: string;
  /** Creates a key with just these scopes. */
  keyWith(...scopes: Scope[]): string;
  request<T = any>(method: string, path: string, options?: RequestOptions): Promise<HttpReply<T>>;
  stop(): Promise<void>;
}

/**
 * Starts the real service in-process on 127.0.0.1 with a fresh SQLite file in a temp dir and a
 * manual clock. Requests go over real HTTP.
 */
export async function startTestService(
  options: Partial<ServiceOptions> & { now?: number; keepDir?: boolean; dir?: string } = {},
): Promise<TestService> {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'chyme-test-'));
  const dbPath = join(dir, 'chyme.db');
  const clock = options.clock instanceof ManualClock ? options.clock : new ManualClock(options.now ?? TEST_NOW);
  const service = await createService({
    dbPath,
    port: 0,
    timezone: options.timezone ?? 'Europe/Berlin',
    logger: silentLogger,
    staticDir: null,
    // Tests that need foods load them on their first foods request; the rest never pay for it.
    foodsWarmUpMs: null,
    // Background work starts on the next turn, as soon as a test could observe it.
    deferredStartMs: 0,
    ...options,
    clock,
  });
  const keyWith = (...scopes: Scope[]) =>
    createApiKey(service.app.db, { name: `test ${scopes.join(' ')}`, scopes, nowMs: clock.now() }).secret;
  const adminKey = keyWith(...SCOPES);

  async function request<T>(method: string, path: string, o: RequestOptions = {}): Promise<HttpReply<T>> {
    const headers: Record<string, string> = { ...o.headers };
    const key = o.key === undefined ? adminKey : o.key;
    if (key !== null) headers.authorization ??= `Bearer ${key}`;
    let body: string | undefined = o.rawBody;
    if (o.body !== undefined) {
      body = JSON.stringify(o.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(service.url + path, { method, headers, ...(body !== undefined ? { body } : {}), redirect: 'manual' });
    const text = await res.text();
    let parsed: any = undefined;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: res.status, headers: res.headers, body: parsed as T, text };
  }

  return {
    service,
    clock,
    baseUrl: service.url,
    dir,
    dbPath,
    adminKey,
    keyWith,
    request,
    async stop() {
      await service.stop();
      if (!options.keepDir && !options.dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Asserts an error body has the CONTRACT §4 shape and returns its error object. */
export function errorOf(reply: HttpReply): { type: string; code: string; message: string; param?: string; request_id: string } {
  const e = reply.body?.error;
  if (!e || typeof e.type !== 'string' || typeof e.code !== 'string' || typeof e.message !== 'string' || typeof e.request_id !== 'string') {
    throw new Error(`not an error body (status ${reply.status}): ${reply.text}`);
  }
  return e;
}
