import { z } from 'zod';
import { currentSettings, settingsAnswer, SettingsAnswerSchema, settingsPatchFrom, SettingsUpdateSchema, updateSettings } from '../../settings.js';
import { defineRoute } from '../route.js';
import { ErrorSchema } from '../schemas.js';

export const HealthSchema = z
  .object({ object: z.literal('health'), status: z.literal('ok'), version: z.string() })
  .meta({ id: 'Health' });

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
    responses: { 200: { description: 'The settings, and the service\'s clock (`generated_at`)', schema: SettingsAnswerSchema } },
    handler: ({ app }) => ({ body: settingsAnswer(currentSettings(app), app.clock.now()) }),
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
    responses: { 200: { description: 'The new settings, and the service\'s clock (`generated_at`)', schema: SettingsAnswerSchema }, 400: { description: 'Invalid', schema: ErrorSchema } },
    handler({ app, body }) {
      return { body: settingsAnswer(updateSettings(app, settingsPatchFrom(body)), app.clock.now()) };
    },
  }),
];
