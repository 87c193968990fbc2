import type { ServerResponse } from 'node:http';
import { z } from 'zod';
import { onKeyRevoked } from '../../auth/revocation.js';
import { getEvent, latestEventSeq, listEventsAfter } from '../../db/events.js';
import { eventEnvelope, type EventRecord } from '../../events/bus.js';
import { mayRead, STREAM_SCOPES } from '../../events/visibility.js';
import type { WebhookNotice } from '../../webhooks/dispatcher.js';
import type { NoticeHub } from '../../webhooks/index.js';
import { errors } from '../errors.js';
import { defineRoute, HANDLED, type RouteDef } from '../route.js';
import { ErrorSchema } from '../schemas.js';

/**
 * GET /v1/events/stream: Server-Sent Events carrying the events webhooks carry, live.
 *
 * Each event is `id: <seq>` (its position in the events table), `event: <type>`, `data: <the
 * event envelope of CONTRACT §7, without webhook_delivery_id>`. A client that reconnects with
 * `Last-Event-ID: <seq>` (or ?last_event_id=) first receives every event it missed, in order.
 * Comments (`: keep-alive`) are sent every heartbeat so proxies and clients see the line alive.
 *
 * Which principal sees which event is the rule of events/visibility.ts. The webhook notices
 * (webhook_subscription.*, webhook_delivery.*) are live news for the app: no id:, not replayed,
 * not sent to webhooks.
 *
 * A restore (in the app, by `chyme restore`, or by any client) replaces the data under open
 * streams: each gets a `database.restored` notice, whose `id:` is the restored file's newest
 * event, so a client resumes from there; the events that follow are the restored file's.
 */

const REPLAY_BATCH = 500;
/** A client this far behind is dropped; it resumes with Last-Event-ID when it reconnects. */
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;

/** ?last_event_id=: a sequence number as sent in `id:`, an evt_ id, or empty (no resume). */
const LAST_EVENT_ID = /^(\d{1,15}|evt_[0-9A-Za-z]{1,60})?$/;

/** Parses Last-Event-ID: a sequence number as sent in `id:`, or an evt_ id. */
function resumePoint(raw: string | undefined, db: Parameters<typeof getEvent>[0]): number | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  const value = raw.trim();
  if (/^\d{1,15}$/.test(value)) return Number(value);
  if (/^evt_[0-9A-Za-z]{1,60}$/.test(value)) {
    const event = getEvent(db, value);
    if (event) return event.seq;
  }
  throw errors.parameterInvalid('Last-Event-ID', 'Last-Event-ID must be the id of an event received on this stream (a sequence number).');
}

export interface EventStreamDeps {
  notices: NoticeHub;
  trackStream: (res: ServerResponse) => void;
  heartbeatMs: number;
}

export function eventStreamRoutes({ notices, trackStream, heartbeatMs }: EventStreamDeps): RouteDef[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/events/stream',
      operationId: 'streamEvents',
      summary: 'Live events (Server-Sent Events)',
      description:
        'text/event-stream of the events webhooks carry: `id: <seq>`, `event: <type>`, `data: <event JSON>`. Send Last-Event-ID (or ?last_event_id=) to resume after a reconnect. A key sees meal.* with nutrition:read and digestion events with digestion:read; webhooks:read adds live webhook_subscription.* / webhook_delivery.* notices (no id, not replayed). Every key gets settings.updated and the database.restored notice: a backup was restored, so everything shown before is stale (its id: is the restored data\'s newest event; resume from it). test.ping is never streamed.',
      tag: 'Events',
      access: 'authenticated',
      query: z.object({
        last_event_id: z
          .string()
          .regex(LAST_EVENT_ID, { message: 'must be the id of an event received on this stream (a sequence number)' })
          .meta({
            description:
              'Resume after this event: the `id:` of an event received on this stream (a sequence number), or an evt_ id of an event this server sent (an evt_ id it does not know is a 400, like an unknown cursor). The Last-Event-ID header wins over it.',
          })
          .optional(),
      }),
      responses: {
        200: { description: 'An endless event stream', contentType: 'text/event-stream', schema: z.string() },
        400: { description: 'Invalid Last-Event-ID', schema: ErrorSchema },
        403: { description: 'The key holds none of the read scopes', schema: ErrorSchema },
      },
      handler({ app, req, res, principal, query }) {
        if (!principal) throw errors.missingApiKey();
        if (!STREAM_SCOPES.some((s) => principal.scopes.has(s))) throw errors.insufficientScopeAny(STREAM_SCOPES);
        const header = req.headers['last-event-id'];
        let lastSeq = resumePoint(typeof header === 'string' ? header : query.last_event_id, app.db);

        res.writeHead(200, {
          'Content-Type': 'text/event-stream; charset=utf-8',
          'Cache-Control': 'no-store',
          Connection: 'keep-alive',
          'X-Accel-Buffering': 'no',
          'X-Content-Type-Options': 'nosniff',
        });
        res.socket?.setNoDelay(true);
        res.socket?.setKeepAlive(true);
        trackStream(res);

        let closed = false;
        const write = (chunk: string) => {
          if (closed) return;
          res.write(chunk);
          if (res.writableLength > MAX_BUFFERED_BYTES) res.end();
        };
        const sendEvent = (event: EventRecord) => {
          if (lastSeq !== undefined && event.seq <= lastSeq) return;
          lastSeq = event.seq;
          if (!mayRead(principal, event.type)) return;
          write(`id: ${event.seq}\nevent: ${event.type}\ndata: ${JSON.stringify(eventEnvelope(event))}\n\n`);
        };
        const sendNotice = (notice: WebhookNotice) => {
          if (!mayRead(principal, notice.type)) return;
          const body = { object: 'notice', type: notice.type, created: new Date(app.clock.now()).toISOString(), data: { object: notice.object } };
          write(`event: ${notice.type}\ndata: ${JSON.stringify(body)}\n\n`);
        };

        // Replay and subscribe in the same tick: events are published synchronously after their
        // commit, so none can fall between the two.
        write('retry: 3000\n: chyme event stream\n\n');
        if (lastSeq !== undefined) {
          for (;;) {
            const batch = listEventsAfter(app.db, lastSeq, REPLAY_BATCH);
            for (const event of batch) sendEvent(event);
            if (batch.length < REPLAY_BATCH || closed) break;
          }
        }
        const offEvents = app.bus.subscribe(sendEvent);
        const offNotices = notices.subscribe(sendNotice);
        const offRestored = app.bus.onRestored(() => {
          // The old file's sequence numbers mean nothing in the restored one.
          lastSeq = latestEventSeq(app.db);
          const body = { object: 'notice', type: 'database.restored', created: new Date(app.clock.now()).toISOString(), data: { object: { object: 'restore' } } };
          write(`id: ${lastSeq}\nevent: database.restored\ndata: ${JSON.stringify(body)}\n\n`);
        });
        // A revoked key loses its stream too, within a second (auth/revocation.ts).
        const offRevoked = onKeyRevoked(app, principal, () => res.end());
        const heartbeat = setInterval(() => write(': keep-alive\n\n'), heartbeatMs);
        heartbeat.unref();
        res.on('close', () => {
          closed = true;
          clearInterval(heartbeat);
          offRevoked();
          offEvents();
          offNotices();
          offRestored();
        });
        return HANDLED;
      },
    }),
  ];
}
