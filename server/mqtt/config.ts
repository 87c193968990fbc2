import { z } from 'zod';
import type { AppContext } from '../app-context.js';
import { readServiceState, writeServiceState } from '../db/service-state.js';
import { InvalidInputError } from '../domain-errors.js';
import { isoDateTime } from '../fields.js';
import { isoUtc } from '../time/tz.js';
import { certificateFingerprint } from '../webhooks/subscriptions.js';
import { FINGERPRINT_PATTERN } from '../webhooks/tls-pin.js';

/**
 * The MQTT integration's settings (Home Assistant discovery): where the broker is, how to log in,
 * the topic prefixes, and whether Home Assistant may log meals through command topics.
 *
 * Kept in service_state under one key, beside the other per-installation facts. The password is
 * stored as it is, like a webhook secret (the client must present it), and never leaves in an
 * answer, a log line or an export: answers say `has_password`.
 */

const STATE_KEY = 'mqtt_config';

export interface MqttConfig {
  enabled: boolean;
  brokerUrl: string | null;
  username: string | null;
  password: string | null;
  discoveryPrefix: string;
  topicPrefix: string;
  commandsEnabled: boolean;
  /** mqtts:// brokers with a self-signed certificate: trust exactly this one (as webhooks do). */
  tlsPinSha256: string | null;
}

export const DEFAULT_MQTT_CONFIG: MqttConfig = {
  enabled: false,
  brokerUrl: null,
  username: null,
  password: null,
  discoveryPrefix: 'homeassistant',
  topicPrefix: 'chyme',
  commandsEnabled: false,
  tlsPinSha256: null,
};

export function readMqttConfig(app: AppContext): MqttConfig {
  return { ...DEFAULT_MQTT_CONFIG, ...readServiceState<Partial<MqttConfig>>(app.db, STATE_KEY) };
}

export function writeMqttConfig(app: AppContext, config: MqttConfig): void {
  writeServiceState(app.db, STATE_KEY, config);
}

// ---- Input ----------------------------------------------------------------------------------

const BROKER_PROTOCOLS = ['mqtt:', 'mqtts:', 'ws:', 'wss:'];

/** Why a broker URL is refused, or undefined when it is fine. */
export function brokerUrlProblem(raw: string): string | undefined {
  if (/[\s\u0000-\u001f\u007f]/.test(raw)) return 'must not contain spaces or control characters';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be a URL such as mqtt://homeassistant.local:1883 or mqtts://192.168.1.10:8883';
  }
  if (!BROKER_PROTOCOLS.includes(url.protocol)) return `must use mqtt, mqtts, ws or wss, not ${url.protocol.replace(/:$/, '')}`;
  if (!url.hostname) return 'must name a host';
  // A non-ASCII or otherwise odd host name never resolves; say so now rather than at connect time.
  if (!/^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)$/.test(url.hostname)) return 'must name a host with letters, digits, dots and hyphens (or an IP address)';
  if (url.username || url.password) return 'must not contain a user name or password: use the username and password fields';
  if (url.hash) return 'must not contain a fragment (#…)';
  if ((url.protocol === 'mqtt:' || url.protocol === 'mqtts:') && url.pathname !== '' && url.pathname !== '/') return 'an mqtt:// or mqtts:// URL has no path';
  return undefined;
}

/** Topic levels: letters, digits, "_" and "-", separated by "/"; no wildcards, no empty level. */
const TOPIC_PREFIX_PATTERN = /^[A-Za-z0-9_-]+(\/[A-Za-z0-9_-]+)*$/;

function topicPrefix(what: string) {
  return z
    .string()
    .max(100, { message: 'must be at most 100 characters' })
    .regex(TOPIC_PREFIX_PATTERN, { message: `must be one or more topic levels of letters, digits, "_" or "-", separated by "/" (no "+", "#" or spaces), e.g. ${what}` })
    .meta({ example: what });
}

// The schemas here are built on first use (z.lazy), not at import: a cold start answers its
// first requests without them (docs/performance.md, "Cold start").
export const MqttUpdateSchema = z.lazy(() =>
  z
    .object({
      enabled: z.boolean().optional().meta({ description: 'Connect (true) or not. Enabling needs a broker_url, stored or in the same request.' }),
      broker_url: z
        .string()
        .max(2048)
        .superRefine((s, ctx) => {
          const problem = brokerUrlProblem(s);
          if (problem) ctx.addIssue({ code: 'custom', message: problem });
        })
        .nullable()
        .optional()
        .meta({ description: 'mqtt://, mqtts://, ws:// or wss:// with host and optional port, e.g. mqtt://homeassistant.local:1883. A pinned certificate needs mqtts://.', example: 'mqtt://homeassistant.local:1883' }),
      username: z.string().min(1).max(256).nullable().optional(),
      password: z.string().min(1).max(256).nullable().optional().meta({ description: 'Write-only: answers show has_password. null removes it.' }),
      discovery_prefix: topicPrefix('homeassistant').optional(),
      topic_prefix: topicPrefix('chyme').optional().meta({ description: 'Where Chyme publishes its states; must differ from discovery_prefix.' }),
      commands_enabled: z.boolean().optional().meta({ description: 'Let Home Assistant log meals (a button per saved meal, a text entity). Anyone who may publish to the command topics can then log meals.' }),
      tls_certificate_sha256: certificateFingerprint
        .nullable()
        .optional()
        .meta({ description: 'mqtts:// only: trust exactly the broker certificate with this SHA-256 fingerprint (a self-signed one) instead of the certificate authorities. Colons, spaces and case are optional on input. null removes the pin.' }),
    })
    .strict()
    .meta({ id: 'MqttSettingsUpdate' }),
);

export type MqttUpdate = z.output<typeof MqttUpdateSchema>;

/** The stored settings with a change applied; refuses a combination that cannot work. */
export function applyMqttUpdate(current: MqttConfig, body: MqttUpdate): MqttConfig {
  const next: MqttConfig = { ...current };
  if (body.enabled !== undefined) next.enabled = body.enabled;
  if (body.broker_url !== undefined) next.brokerUrl = body.broker_url;
  if (body.username !== undefined) next.username = body.username;
  if (body.password !== undefined) next.password = body.password;
  if (body.discovery_prefix !== undefined) next.discoveryPrefix = body.discovery_prefix;
  if (body.topic_prefix !== undefined) next.topicPrefix = body.topic_prefix;
  if (body.commands_enabled !== undefined) next.commandsEnabled = body.commands_enabled;
  if (body.tls_certificate_sha256 !== undefined) next.tlsPinSha256 = body.tls_certificate_sha256;
  if (next.enabled && !next.brokerUrl) throw new InvalidInputError('broker_url', 'Invalid broker_url: a broker is needed to enable MQTT, e.g. mqtt://homeassistant.local:1883');
  if (next.tlsPinSha256 && next.brokerUrl && !next.brokerUrl.startsWith('mqtts:')) {
    throw new InvalidInputError('tls_certificate_sha256', 'Invalid tls_certificate_sha256: a pinned certificate applies to mqtts:// brokers only');
  }
  if (next.discoveryPrefix === next.topicPrefix) throw new InvalidInputError('topic_prefix', 'Invalid topic_prefix: must differ from discovery_prefix');
  return next;
}

// ---- Resource -------------------------------------------------------------------------------

export type MqttStatusName = 'disabled' | 'connecting' | 'connected' | 'error';

export interface MqttStatus {
  status: MqttStatusName;
  lastError: string | null;
  connectedAt: number | null;
}

export const MqttSettingsSchema = z.lazy(() =>
  z
    .object({
      object: z.literal('integration.mqtt'),
      enabled: z.boolean(),
      broker_url: z.string().nullable(),
      username: z.string().nullable(),
      has_password: z.boolean(),
      discovery_prefix: z.string(),
      topic_prefix: z.string(),
      commands_enabled: z.boolean(),
      tls_certificate_sha256: z.string().regex(new RegExp(FINGERPRINT_PATTERN)).nullable(),
      status: z.enum(['disabled', 'connecting', 'connected', 'error']),
      last_error: z.string().nullable().meta({ description: 'Why the last connection failed or ended, as a sentence; null once connected.' }),
      connected_at: isoDateTime.nullable(),
    })
    .meta({ id: 'MqttSettings' }),
);

export function mqttResource(config: MqttConfig, status: MqttStatus): Record<string, unknown> {
  return {
    object: 'integration.mqtt',
    enabled: config.enabled,
    broker_url: config.brokerUrl,
    username: config.username,
    has_password: config.password !== null,
    discovery_prefix: config.discoveryPrefix,
    topic_prefix: config.topicPrefix,
    commands_enabled: config.commandsEnabled,
    tls_certificate_sha256: config.tlsPinSha256,
    status: status.status,
    last_error: status.lastError,
    connected_at: status.connectedAt === null ? null : isoUtc(status.connectedAt),
  };
}
