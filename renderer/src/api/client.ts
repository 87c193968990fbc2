/**
 * The renderer's only way to the service: `/v1` requests through a transport.
 *
 * - On a computer the transport is same-origin HTTP (`fetch`).
 * - On the phone (renderer/src/phone/) it is the worker that runs the service's routes over the
 *   phone's own database: the page hands it the request and gets the answer back as a Response,
 *   so everything below (errors, ETags, JSON) is the same code for both.
 *
 * Over HTTP:
 * - In Electron the preload bridge hands over an API key and every request carries
 *   `Authorization: Bearer <key>`.
 * - In a browser opened through `chyme serve`'s one-time link, the server has set an HttpOnly
 *   session cookie and same-origin requests are authenticated by it; the renderer never sees it.
 */
import type { ApiErrorBody, List } from './types';

/** An API error body, or one the client makes up (network failure, a non-JSON answer). */
type ErrorDetail = Omit<ApiErrorBody['error'], 'type' | 'request_id'> & { type: ApiErrorBody['error']['type'] | 'network_error'; request_id?: string | undefined };

export class ApiError extends Error {
  readonly status: number;
  readonly type: string;
  readonly code: string;
  readonly param: string | undefined;
  readonly requestId: string | undefined;

  constructor(status: number, body: ErrorDetail) {
    super(body.message);
    this.name = 'ApiError';
    this.status = status;
    this.type = body.type;
    this.code = body.code;
    this.param = body.param;
    this.requestId = body.request_id;
  }
}

type Query = Record<string, string | number | boolean | undefined | null>;

export interface RequestOptions {
  query?: Query;
  body?: unknown;
  idempotencyKey?: string;
  /** Write only if the object is still this version (its ETag from an earlier answer). */
  ifMatch?: string | null | undefined;
  signal?: AbortSignal;
}

let keyPromise: Promise<string> | null = null;
let key: string | undefined;

/**
 * Headers that authenticate a request: a bearer key in Electron, nothing (the cookie) in a browser.
 * At once whenever it can be (a browser, the phone, Electron once the key is known): a request
 * then leaves in its caller's own turn, before React renders what the caller changed on the way
 * (a form's busy state), instead of after it.
 */
export function authHeaders(): Record<string, string> | Promise<Record<string, string>> {
  const bridge = window.chyme;
  if (!bridge) return {};
  if (key !== undefined) return { Authorization: `Bearer ${key}` };
  keyPromise ??= bridge.apiKey().then((k) => (key = k));
  return keyPromise.then((k) => ({ Authorization: `Bearer ${k}` }));
}

const unauthenticatedListeners = new Set<() => void>();
/** Called when the service answers 401: the session is missing or expired. */
export function onUnauthenticated(fn: () => void): () => void {
  unauthenticatedListeners.add(fn);
  return () => unauthenticatedListeners.delete(fn);
}

/** The query's parameters as sent: empty, null and undefined values are left out. */
function queryParams(query?: Query): Record<string, string> {
  const params: Record<string, string> = {};
  for (const [k, v] of Object.entries(query ?? {})) {
    if (v !== undefined && v !== null && v !== '') params[k] = String(v);
  }
  return params;
}

export function url(path: string, query?: Query): string {
  const s = new URLSearchParams(queryParams(query)).toString();
  // Relative to the page (base './'): works at any mount point of the same origin.
  return `${path.replace(/^\//, './')}${s ? `?${s}` : ''}`;
}

/** One `/v1` request as a transport carries it. */
export interface TransportRequest {
  method: string;
  /** The path alone, e.g. /v1/nutrition/meals. */
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  /** JSON text. */
  body: string | undefined;
  signal: AbortSignal | undefined;
}

/** Carries a request to the service; rejects (not a Response) when the service cannot be reached. */
export type Transport = (request: TransportRequest) => Promise<Response>;

const httpTransport: Transport = (r) =>
  fetch(url(r.path, r.query), { method: r.method, headers: r.headers, body: r.body, credentials: 'same-origin', signal: r.signal });

let transport: Transport = httpTransport;

/** The phone's page sets its worker as the transport, before anything is requested (and its events, events.ts's setEventFeed). */
export function setTransport(t: Transport): void {
  transport = t;
}

async function send(method: string, path: string, opts: RequestOptions): Promise<Response> {
  const auth = authHeaders();
  const headers: Record<string, string> = { Accept: 'application/json', ...(auth instanceof Promise ? await auth : auth) };
  if (opts.body !== undefined) headers['Content-Type'] = 'application/json';
  if (opts.idempotencyKey) headers['Idempotency-Key'] = opts.idempotencyKey;
  if (opts.ifMatch) headers['If-Match'] = opts.ifMatch;
  let res: Response;
  try {
    res = await transport({
      method,
      path,
      query: queryParams(opts.query),
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      signal: opts.signal,
    });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw unreachable();
  }
  if (res.ok) return res;
  throw answerError(res.status, res.statusText, await res.text(), res.headers.get('Request-Id'));
}

/** The ApiError for a failed answer: the service's own sentence when the body is its error JSON. */
function answerError(status: number, statusText: string, bodyText: string, requestId: string | null): ApiError {
  let body: ApiErrorBody | null = null;
  try {
    body = JSON.parse(bodyText) as ApiErrorBody;
  } catch {
    /* not JSON */
  }
  if (status === 401) for (const fn of unauthenticatedListeners) fn();
  return new ApiError(
    status,
    body?.error ?? {
      type: 'api_error',
      code: `http_${status}`,
      message: `The service answered ${status} ${statusText}.`,
      request_id: requestId ?? undefined,
    },
  );
}

const unreachable = () =>
  new ApiError(0, {
    type: 'network_error',
    code: 'network_error',
    message: 'Chyme’s service is not reachable. Is it still running?',
  });

export interface UploadOptions {
  /** Bytes of the request body sent so far, and its total size. */
  onProgress?: (sent: number, total: number) => void;
  /** Called once the whole body is sent and the service is working on it. */
  onSent?: () => void;
  signal?: AbortSignal;
}

/**
 * POSTs a multipart form. XMLHttpRequest rather than fetch: only it reports upload progress, which
 * is real progress for a gigabyte export (the answer comes once the service has read it all).
 */
export async function postForm<T>(path: string, form: FormData, opts: UploadOptions = {}): Promise<{ status: number; body: T }> {
  const headers = { Accept: 'application/json', ...(await authHeaders()) };
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', url(path));
    xhr.withCredentials = true;
    for (const [k, v] of Object.entries(headers)) xhr.setRequestHeader(k, v);
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable) opts.onProgress?.(e.loaded, e.total);
    };
    xhr.upload.onload = () => opts.onSent?.();
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) {
        try {
          resolve({ status: xhr.status, body: JSON.parse(xhr.responseText) as T });
        } catch {
          reject(answerError(xhr.status, xhr.statusText, '', xhr.getResponseHeader('Request-Id')));
        }
      } else {
        reject(answerError(xhr.status, xhr.statusText, xhr.responseText, xhr.getResponseHeader('Request-Id')));
      }
    };
    xhr.onerror = () => reject(unreachable());
    xhr.onabort = () => reject(new DOMException('The upload was cancelled.', 'AbortError'));
    if (opts.signal?.aborted) return reject(new DOMException('The upload was cancelled.', 'AbortError'));
    opts.signal?.addEventListener('abort', () => xhr.abort(), { once: true });
    xhr.send(form);
  });
}

export async function request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
  const res = await send(method, path, opts);
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  return (text ? JSON.parse(text) : undefined) as T;
}

/** An answer's body with its version (the ETag header; null when the service sent none). */
export interface Versioned<T> {
  body: T;
  etag: string | null;
}

export async function requestVersioned<T>(method: string, path: string, opts: RequestOptions = {}): Promise<Versioned<T>> {
  const res = await send(method, path, opts);
  return { body: JSON.parse(await res.text()) as T, etag: res.headers.get('ETag') };
}

export const api = {
  get: <T>(path: string, query?: Query, signal?: AbortSignal) => request<T>('GET', path, { query, signal }),
  post: <T>(path: string, body?: unknown, idempotencyKey?: string) =>
    request<T>('POST', path, { body: body ?? {}, idempotencyKey }),
  patch: <T>(path: string, body: unknown) => request<T>('PATCH', path, { body }),
  del: <T>(path: string) => request<T>('DELETE', path),

  /** Every page of a cursor-paginated list (meals, timeline), newest first. */
  async all<T extends { id?: string; meal_id?: string }>(path: string, query: Query, signal?: AbortSignal): Promise<T[]> {
    const out: T[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await request<List<T>>('GET', path, { query: { ...query, limit: 100, starting_after: after }, signal });
      out.push(...page.data);
      const last = page.data[page.data.length - 1];
      if (!page.has_more || !last) return out;
      // Meals page by their id; timeline entries by the id of their meal.
      after = last.id ?? last.meal_id;
      if (!after) return out;
    }
  },

  /** A response body as a Blob, for downloads (export JSON, meals CSV). */
  async blob(path: string): Promise<{ blob: Blob; filename: string | null }> {
    const res = await send('GET', path, {});
    const cd = res.headers.get('Content-Disposition') ?? '';
    const m = /filename\*?=(?:UTF-8'')?"?([^";]+)"?/i.exec(cd);
    return { blob: await res.blob(), filename: m?.[1] ? decodeURIComponent(m[1]) : null };
  },
};

/** A fresh Idempotency-Key for one user action (kept across retries of that action). */
export function idempotencyKey(): string {
  return crypto.randomUUID();
}

/** The message to show for any thrown value. */
export function errorMessage(err: unknown): string {
  if (err instanceof ApiError) return err.message;
  if (err instanceof Error) return err.message;
  return String(err);
}

const prefetched = new Map<string, Promise<unknown>>();

/**
 * Starts a GET before React renders (at boot), so the first screen's data is already in flight
 * while the app shell mounts. The first taker gets the response; later loads fetch afresh.
 */
export function prefetch(path: string, query?: Query): void {
  const p = request('GET', path, { query });
  p.catch(() => undefined); // the taker sees the error
  prefetched.set(url(path, query), p);
}

export function takePrefetched<T>(path: string, query?: Query): Promise<T> | undefined {
  const key = url(path, query);
  const p = prefetched.get(key) as Promise<T> | undefined;
  prefetched.delete(key);
  return p;
}
