import type { Transport } from '../api/client';
import type { EventFeed } from '../api/events';
import type { ServiceEvent } from '../api/types';
import type { ControlResults, CoreControl, CoreNotice, CoreReady, CoreRequest, CoreReply } from './protocol';

/**
 * The phone's transport: each `/v1` request goes to the worker with an id, and its answer comes
 * back as the Response the HTTP transport would have given (status, headers, JSON text), so the
 * client's error and ETag handling is the same code on both.
 */
export interface CoreWorker {
  transport: Transport;
  /** Settles when the worker has opened the database (or failed to). */
  ready: Promise<CoreReady>;
  /** What the page asks the worker besides `/v1` (protocol.ts). */
  control<C extends CoreControl>(control: C): Promise<ControlResults[C]>;
  /** The service's events as the worker posts them (events.ts's feed on the phone): open once the worker is, closed if it failed. */
  events: EventFeed;
}

export function connectWorker(worker: Worker): CoreWorker {
  const pending = new Map<number, (reply: CoreReply) => void>();
  let deliver: ((ev: ServiceEvent) => void) | undefined;
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
      if (notice.type === 'event') deliver?.(notice.event);
      else if (notice.type === 'ready') opened(notice);
      else failed(new Error(notice.message));
      return;
    }
    const settle = pending.get(notice.id);
    pending.delete(notice.id);
    settle?.(notice);
  };
  /** Sends `message` once the worker is open; `settle` gets its reply. */
  const send = (message: CoreRequest, settle: (reply: CoreReply) => void, reject: (err: Error) => void) => {
    pending.set(message.id, settle);
    // A worker that failed to open answers nothing: the request fails as an unreachable service would.
    ready.catch((err: unknown) => {
      pending.delete(message.id);
      reject(err instanceof Error ? err : new Error(String(err)));
    });
    worker.postMessage(message);
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
      send(
        message,
        (reply) => {
          if (!('answer' in reply)) return reject(new Error('the worker answered a /v1 request with something else'));
          const { answer } = reply;
          resolve(new Response(answer.body, { status: answer.status, headers: { 'Content-Type': 'application/json', ...answer.headers } }));
        },
        reject,
      );
    });
  };
  const control = <C extends CoreControl>(kind: C) =>
    new Promise<ControlResults[C]>((resolve, reject) => {
      send(
        { id: nextId++, control: kind },
        (reply) => {
          if ('result' in reply) resolve(reply.result as ControlResults[C]);
          else reject(new Error('error' in reply ? reply.error : 'the worker answered a control with a /v1 answer'));
        },
        reject,
      );
    });
  const events: EventFeed = (d, status) => {
    deliver = d;
    status('connecting');
    ready.then(
      () => status('open'),
      () => status('closed'),
    );
  };
  return { transport, ready, control, events };
}
