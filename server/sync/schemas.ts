import { z } from 'zod';
import { isoDateTime } from '../fields.js';

/**
 * The sync resource (GET /v1/sync) and the bodies of its actions. The command line's
 * `chyme sync status --json` prints the same object, so tools read one shape everywhere. Built on
 * first use (z.lazy), not at import: a cold start of the service answers its first requests
 * without them (docs/performance.md, "Cold start").
 */

const deviceId = z.lazy(() => z.string().regex(/^dev_[0-9A-Za-z]{20}$/));

export const SyncDeviceSchema = z.lazy(() =>
  z
    .object({
      device_id: deviceId,
      device_name: z.string(),
      joined_at: isoDateTime,
      last_seen_at: isoDateTime.nullable().meta({ description: 'When the device last said it was running (it writes this about once an hour and at start).' }),
      this_device: z.boolean(),
    })
    .meta({ id: 'SyncDevice' }),
);

export const SyncConflictSchema = z.lazy(() =>
  z
    .object({
      record_type: z.enum(['meal', 'sleep', 'food', 'saved_meal', 'settings']),
      record_id: z.string(),
      record_label: z.string().nullable().meta({ description: 'The record as a person knows it: a meal by its local day, time and description, a food or saved meal by its name; null once it is gone.' }),
      field: z.string(),
      kept: z.unknown().meta({ description: 'The value every device now has.' }),
      other_values: z.array(z.unknown()).meta({ description: 'The concurrent values that lost.' }),
      detected_at: isoDateTime,
    })
    .meta({ id: 'SyncConflict' }),
);

export const SyncStatusSchema = z.lazy(() =>
  z
    .object({
      object: z.literal('sync'),
      enabled: z.boolean().meta({ description: 'False until sync is set up (init or join) on this device, and after leaving.' }),
      encrypted: z.literal(true).meta({ description: 'Always true: the relay stores only sealed chunks it cannot read (docs/sync.md).' }),
      device_id: deviceId.nullable(),
      device_name: z.string().nullable(),
      relay: z.string().nullable().meta({ description: 'The relay URL (ws:// or wss://); the token is never shown here.' }),
      connected: z.boolean().meta({ description: 'True while this device has a live connection to the relay.' }),
      last_synced_at: isoDateTime.nullable().meta({ description: 'When the relay last had every change of this device.' }),
      pending_changes: z.number().int().min(0).meta({ description: 'Local changes the relay has not confirmed yet (records waiting to be written to the documents, plus documents with unconfirmed changes).' }),
      webhook_host: z
        .object({ device_id: deviceId, device_name: z.string(), since: isoDateTime })
        .nullable()
        .meta({ description: 'The one device that sends webhooks and MQTT; null when sync is off (then this device sends them).' }),
      is_webhook_host: z.boolean().meta({ description: 'Whether this device sends webhooks and MQTT messages.' }),
      peers: z.array(SyncDeviceSchema).meta({ description: 'Every device that shares this history, this one included.' }),
      conflicts: z.array(SyncConflictSchema).meta({ description: 'The latest concurrent edits of one field (newest first, at most 20).' }),
      integrity: z
        .array(z.object({ relay_seq: z.number().int(), problem: z.string(), detected_at: isoDateTime }))
        .meta({ description: 'Chunks from the relay that failed authentication (changed, or moved to another document) and were skipped; newest first, at most 20. Empty when all is well.' }),
      last_error: z.string().nullable().meta({ description: 'Why the last connection to the relay failed, as a sentence; null while connected.' }),
    })
    .meta({ id: 'Sync' }),
);

/** A device's name as a person gives it (set-up and join alike). */
const DeviceNameSchema = z.lazy(() =>
  z
    .string()
    .max(60)
    .regex(/\S/, { message: 'must not be blank' })
    .meta({ description: "This device's name (default: the computer's host name); surrounding spaces are dropped." }),
);

export const SyncSetupSchema = z.lazy(() =>
  z
    .strictObject({
      relay: z.string().regex(/^wss?:\/\/\S+$/, { message: 'must be a ws:// or wss:// URL' }).max(2000),
      token: z.string().min(8, { message: 'must be at least 8 characters' }).max(200),
      name: DeviceNameSchema.optional(),
    })
    .meta({ id: 'SyncSetup' }),
);

export const SyncJoinSchema = z.lazy(() =>
  z
    .strictObject({
      pairing_code: z.string().max(4000).regex(/\S/, { message: 'must not be blank' }).meta({ description: 'The code another device shows (GET /v1/sync/pairing-code, or its Sync card); 400 when it is not one.' }),
      name: DeviceNameSchema.optional(),
    })
    .meta({ id: 'SyncJoin' }),
);

export const SyncPairingSchema = z.lazy(() =>
  z
    .object({
      object: z.literal('sync.pairing_code'),
      pairing_code: z.string().meta({ description: 'Everything another device needs to join: the relay\'s address and the history secret (no relay token). Treat it as a password.' }),
      url: z.string().meta({
        description: 'Opens the phone app that the relay serves, with the code filled in: https://RELAY/app/#pair=CODE (http:// for a ws:// relay). The code is in the fragment, which no server sees; the Sync card shows this as a QR code.',
      }),
    })
    .meta({ id: 'SyncPairing' }),
);

export type SyncStatus = z.output<typeof SyncStatusSchema>;
