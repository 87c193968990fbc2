import { z } from 'zod';
import { mqttResource, MqttSettingsSchema, MqttUpdateSchema } from '../../mqtt/config.js';
import type { MqttSubsystem } from '../../mqtt/client.js';
import { defineRoute } from '../route.js';
import { ErrorSchema } from '../schemas.js';

export const MqttTestSchema = z
  .object({
    object: z.literal('integration.mqtt_test'),
    ok: z.boolean(),
    error: z.string().nullable().meta({ description: 'Why the connection failed, as a sentence; null when it worked.' }),
    tls_certificate_sha256: z.string().nullable().meta({ description: 'mqtts://: the certificate the broker presented, to pin a self-signed one.' }),
  })
  .meta({ id: 'MqttTest' });

/** GET/PATCH /v1/integrations/mqtt and its connection test (admin: it holds a password). */
export function mqttRoutes(deps: { mqtt: MqttSubsystem }) {
  const resource = () => mqttResource(deps.mqtt.config(), deps.mqtt.status());
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/integrations/mqtt',
      operationId: 'getMqtt',
      summary: 'MQTT settings and connection status (Home Assistant discovery)',
      tag: 'Integrations',
      access: 'admin',
      responses: { 200: { description: 'The settings (the password is never shown) and the live status', schema: MqttSettingsSchema } },
      handler: () => ({ body: resource() }),
    }),
    defineRoute({
      method: 'PATCH',
      path: '/v1/integrations/mqtt',
      operationId: 'updateMqtt',
      summary: 'Change MQTT settings; the client reconnects with them',
      description:
        'Changing discovery_prefix, topic_prefix or broker_url, or disabling, first removes the retained discovery configs Chyme published, so Home Assistant keeps no stale entities.',
      tag: 'Integrations',
      access: 'admin',
      body: MqttUpdateSchema,
      responses: { 200: { description: 'The new settings', schema: MqttSettingsSchema }, 400: { description: 'Invalid', schema: ErrorSchema } },
      async handler({ body }) {
        await deps.mqtt.update(body);
        return { body: resource() };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/integrations/mqtt/test',
      operationId: 'testMqtt',
      summary: 'Try a connection with the stored settings and any changes in the body (nothing is stored)',
      tag: 'Integrations',
      access: 'admin',
      body: MqttUpdateSchema,
      responses: { 200: { description: 'Whether the broker accepted the connection', schema: MqttTestSchema }, 400: { description: 'Invalid', schema: ErrorSchema } },
      async handler({ body }) {
        const r = await deps.mqtt.test(body ?? {});
        return { body: { object: 'integration.mqtt_test', ok: r.ok, error: r.error, tls_certificate_sha256: r.tlsCertificateSha256 } };
      },
    }),
  ];
}
