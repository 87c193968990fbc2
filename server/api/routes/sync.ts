import { decodePairingCode, type SyncSubsystem } from '../../sync/index.js';
import { phoneAppUrl } from '../../sync/pairing-url.js';
import { SyncJoinSchema, SyncPairingSchema, SyncSetupSchema, SyncStatusSchema } from '../../sync/schemas.js';
import { defineRoute } from '../route.js';
import { ErrorSchema } from '../schemas.js';

/** GET /v1/sync and the set-up actions (admin: the pairing code is the key to the whole history). */
export function syncRoutes(deps: { sync: SyncSubsystem }) {
  const sync = deps.sync;
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/sync',
      operationId: 'getSync',
      summary: 'Sync status: this device, the relay, the other devices and the webhook host',
      tag: 'Sync',
      access: 'authenticated',
      responses: { 200: { description: 'The status', schema: SyncStatusSchema } },
      handler: () => ({ body: sync.status() }),
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/sync/setup',
      operationId: 'setupSync',
      summary: 'Start a synced history on this device with a relay; this device becomes the webhook host',
      description: 'Checks that the relay accepts the token first (502 relay_unreachable when not; nothing is changed then). Every record already on this device becomes part of the history.',
      tag: 'Sync',
      access: 'admin',
      body: SyncSetupSchema,
      responses: {
        201: { description: 'Sync is on', schema: SyncStatusSchema },
        400: { description: 'Invalid', schema: ErrorSchema },
        409: { description: 'Sync is already set up', schema: ErrorSchema },
        502: { description: 'The relay could not be reached or refused the token', schema: ErrorSchema },
      },
      async handler({ body }) {
        return { status: 201, body: await sync.setup(body) };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/sync/join',
      operationId: 'joinSync',
      summary: 'Join the history another device set up, with its pairing code',
      description: 'Downloads the whole history (this can take a while for years of data), then adds every record already on this device to it: nothing here is dropped. Settings come from the history.',
      tag: 'Sync',
      access: 'admin',
      body: SyncJoinSchema,
      responses: {
        200: { description: 'Joined', schema: SyncStatusSchema },
        400: { description: 'Invalid pairing code', schema: ErrorSchema },
        409: { description: 'Sync is already set up', schema: ErrorSchema },
        502: { description: 'The relay could not be reached or does not have the history', schema: ErrorSchema },
      },
      async handler({ body }) {
        return { body: await sync.join(body) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/sync/pairing-code',
      operationId: 'getSyncPairingCode',
      summary: 'The pairing code another device joins with, and the address that opens the phone app with it (both hold the history secret: treat them as a password)',
      tag: 'Sync',
      access: 'admin',
      responses: { 200: { description: 'The code', schema: SyncPairingSchema }, 409: { description: 'Sync is not set up', schema: ErrorSchema } },
      handler() {
        const code = sync.pairingCode();
        return { body: { object: 'sync.pairing_code', pairing_code: code, url: phoneAppUrl(decodePairingCode(code).relay, code) } };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/sync/leave',
      operationId: 'leaveSync',
      summary: 'Stop syncing on this device; its records stay here and on the other devices',
      tag: 'Sync',
      access: 'admin',
      responses: { 200: { description: 'Sync is off', schema: SyncStatusSchema }, 409: { description: 'Sync is not set up', schema: ErrorSchema } },
      async handler() {
        return { body: await sync.leave() };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/sync/webhook-host',
      operationId: 'becomeWebhookHost',
      summary: 'Make this device the one that sends webhooks and MQTT messages (the previous host stops when it syncs)',
      tag: 'Sync',
      access: 'admin',
      responses: { 200: { description: 'This device is the webhook host', schema: SyncStatusSchema }, 409: { description: 'Sync is not set up', schema: ErrorSchema } },
      async handler() {
        return { body: await sync.becomeWebhookHost() };
      },
    }),
  ];
}
