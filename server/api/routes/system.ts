import { z } from 'zod';
import { isValidTimeZone } from '../../time/tz.js';
import { currentSettings, settingsResource, updateSettings } from '../../settings.js';
import { defineRoute } from '../route.js';
import { ErrorSchema } from '../schemas.js';

export const HealthSchema = z
  .object({ object: z.literal('health'), status: z.literal('ok'), version: z.string() })
  .meta({ id: 'Health' });

export const SettingsSchema = z
  .object({
    object: z.literal('settings'),
    timezone: z.string(),
    day_start: z.string(),
    units: z.enum(['metric', 'imperial']),
    updated_at: z.string(),
  })
  .meta({ id: 'Settings' });

export const SettingsUpdateSchema = z
  .strictObject({
    timezone: z.string().refine(isValidTimeZone, { message: 'must be an IANA time zone such as Europe/Berlin' }).optional(),
    day_start: z
      .string()
      .regex(/^([01]\d|2[0-3]):[0-5]\d$/, { message: 'must be a time of day written HH:MM' })
      .optional(),
    units: z.enum(['metric', 'imperial']).optional(),
  })
  .meta({ id: 'SettingsUpdate' });

export const systemRoutes = [
  defineRoute({
    method: 'GET',
    path: '/v1/health',
    operationId: 'health',
    summary: 'Service health (no key needed)',
    tag: 'System',
    access: 'public',
    responses: { 200: { description: 'The service is up', schema: HealthSchema } },
    handler: ({ app }) => ({ body: { object: 'health', status: 'ok', version: app.version } }),
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/settings',
    operationId: 'getSettings',
    summary: 'Read settings (any valid key)',
    tag: 'Settings',
    access: 'authenticated',
    responses: { 200: { description: 'The settings', schema: SettingsSchema } },
    handler: ({ app }) => ({ body: settingsResource(currentSettings(app)) }),
  }),
  defineRoute({
    method: 'PATCH',
    path: '/v1/settings',
    operationId: 'updateSettings',
    summary: 'Change settings',
    description:
      'Changing day_start re-derives every meal day; changing timezone moves "today" and how meals logged with Z timestamps are placed. Stored meal instants never change.',
    tag: 'Settings',
    access: 'admin',
    body: SettingsUpdateSchema,
    responses: { 200: { description: 'The new settings', schema: SettingsSchema }, 400: { description: 'Invalid', schema: ErrorSchema } },
    handler({ app, body }) {
      const patch: Parameters<typeof updateSettings>[1] = {};
      if (body.timezone !== undefined) patch.timezone = body.timezone;
      if (body.day_start !== undefined) patch.dayStart = body.day_start;
      if (body.units !== undefined) patch.units = body.units;
      return { body: settingsResource(updateSettings(app, patch)) };
    },
  }),
];
