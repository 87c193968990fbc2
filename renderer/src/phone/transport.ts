import type { Transport } from '../api/client';
import type { CoreNotice, CoreReady, CoreRequest, LocalAnswer } from './protocol';

/**
 * The phone's transport: each `/v1` request goes to the worker with an id, and its answer comes
 * back as the Response the HTTP transport would have given (status, headers, JSON text), so the
 * client's error and ETag handling is the same code on both.
 */
export interface CoreWorker {
  transport: Transport;
  /** Settles when the worker has opened the database (or failed to). */
  ready: Promise<CoreReady>;
}

export function connectWorker(worker: Worker): CoreWorker {
  const pending = new Map<number, (answer: LocalAnswer) => void>();
  let nextId = 1;
  let opened!: (ready: CoreReady) => void;
  let failed!: (err: Error) => void;
  const ready = new Promise<CoreReady>((resolve, reject) => {
    opened = resolve;
    failed = reject;
  });
  worker.onmessage = (event: MessageEvent<CoreNotice>) => {
    const notice = event.data;
    if ('type' in notice) {
      if (notice.type === 'ready') opened(notice);
      else failed(new Error(notice.message));
      return;
    }
    const settle = pending.get(notice.id);
    pending.delete(notice.id);
    settle?.(notice.answer);
  };
  const transport: Transport = (r) => {
    if (r.signal?.aborted) return Promise.reject(new DOMException('The request was aborted.', 'AbortError'));
    const id = nextId++;
    const headers = Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k.toLowerCase(), v]));
    const message: CoreRequest = { id, request: { method: r.method, path: r.path, query: r.query, headers, ...(r.body === undefined ? {} : { body: r.body }) } };
    return new Promise<Response>((resolve, reject) => {
      // An aborted request is forgotten here; the worker still answers it, into nothing.
      r.signal?.addEventListener('abort', () => {
        pending.delete(id);
        reject(new DOMException('The request was aborted.', 'AbortError'));
      }, { once: true });
      pending.set(id, (answer) => resolve(new Response(answer.body, { status: answer.status, headers: { 'Content-Type': 'application/json', ...answer.headers } })));
      // A worker that failed to open answers nothing: the request fails as an unreachable service would.
      ready.catch((err: unknown) => {
        pending.delete(id);
        reject(err instanceof Error ? err : new Error(String(err)));
      });
      worker.postMessage(message);
    });
  };
  return { transport, ready };
}
