/**
 * Live events: what the service announces (the events webhooks carry), for the screens to refresh.
 *
 * They come from a feed. On a computer it is `GET /v1/events/stream` (Server-Sent Events): since
 * EventSource cannot send an Authorization header, and the Electron renderer authenticates with a
 * bearer key, the stream is read with fetch and parsed here (the text/event-stream format is
 * small). One code path serves the browser (cookie) and Electron (bearer), so the path the e2e tests
 * exercise is the one the desktop app runs. It reconnects with backoff, sending Last-Event-ID.
 * On the phone the feed is the worker's (renderer/src/phone/transport.ts), set with setEventFeed
 * beside client.ts's setTransport: the same events, posted by the worker's service.
 */
import { authHeaders, url } from './client';
import type { ServiceEvent, StreamEventType } from './types';

export type StreamStatus = 'connecting' | 'open' | 'closed';
type Listener = (ev: ServiceEvent) => void;

/** Starts delivering events for the rest of the page's life, and says how its connection stands. */
export type EventFeed = (deliver: Listener, status: (s: StreamStatus) => void) => void;

const listeners = new Set<Listener>();
const statusListeners = new Set<(s: StreamStatus) => void>();
let status: StreamStatus = 'closed';
let started = false;
let lastEventId = '';

function setStatus(s: StreamStatus) {
  status = s;
  for (const fn of statusListeners) fn(s);
}

/** The service's stream over HTTP (below). */
const httpFeed: EventFeed = () => void run();
let feed: EventFeed = httpFeed;

/** The phone's page sets its worker's feed, before anything subscribes. */
export function setEventFeed(f: EventFeed): void {
  feed = f;
}

/** Subscribes to every event; starts the shared feed on first use. */
export function subscribe(fn: Listener): () => void {
  listeners.add(fn);
  if (!started) {
    started = true;
    feed(deliver, setStatus);
  }
  return () => listeners.delete(fn);
}

export function onStatus(fn: (s: StreamStatus) => void): () => void {
  statusListeners.add(fn);
  fn(status);
  return () => statusListeners.delete(fn);
}

function dispatch(type: string, data: string) {
  if (!data) return;
  let ev: ServiceEvent;
  try {
    ev = JSON.parse(data) as ServiceEvent;
  } catch {
    return;
  }
  // The SSE `event:` field names the type when the body does not.
  if (!ev.type) ev.type = type as StreamEventType;
  deliver(ev);
}

function deliver(ev: ServiceEvent) {
  for (const fn of listeners) {
    try {
      fn(ev);
    } catch (err) {
      console.error(err);
    }
  }
}

/** Parses one text/event-stream connection until it ends. */
async function readStream(body: ReadableStream<Uint8Array>): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  let type = 'message';
  let data: string[] = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += decoder.decode(value, { stream: true });
    let nl: number;
    while ((nl = buf.search(/\r\n|\r|\n/)) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + (buf.startsWith('\r\n', nl) ? 2 : 1));
      if (line === '') {
        dispatch(type, data.join('\n'));
        type = 'message';
        data = [];
        continue;
      }
      if (line.startsWith(':')) continue; // comment / keep-alive
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const val = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'event') type = val;
      else if (field === 'data') data.push(val);
      else if (field === 'id') lastEventId = val;
    }
  }
}

async function run(): Promise<void> {
  let delay = 1000;
  let opened = false;
  for (;;) {
    setStatus('connecting');
    try {
      const headers: Record<string, string> = { Accept: 'text/event-stream', ...(await authHeaders()) };
      if (lastEventId) headers['Last-Event-ID'] = lastEventId;
      const res = await fetch(url('/v1/events/stream'), { headers, credentials: 'same-origin', cache: 'no-store' });
      if (res.ok && res.body) {
        setStatus('open');
        delay = 1000;
        // A reconnect may have missed events (the service replays from Last-Event-ID, but notices
        // and a first connection after an outage are not replayed): listeners refresh what they show.
        if (opened) dispatch('stream.opened', JSON.stringify({ object: 'event', id: '', type: 'stream.opened', created: '', data: { object: {} } }));
        opened = true;
        await readStream(res.body);
      } else {
        await res.body?.cancel();
        // 401: no session (the app shows the sign-in hint); keep trying slowly in case one appears.
        if (res.status === 401 || res.status === 403) delay = 15000;
      }
    } catch {
      /* network error: retry */
    }
    setStatus('closed');
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 30000);
  }
}
