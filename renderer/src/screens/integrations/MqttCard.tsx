import { useEffect, useRef, useState, type FormEvent } from 'react';
import { errorMessage } from '../../api/client';
import { getMqtt, testMqtt, updateMqtt } from '../../api/mqtt';
import type { MqttSettings, MqttSettingsUpdate, MqttTest } from '../../api/types';
import { ConfirmButton } from '../../components/ConfirmButton';
import { Chip, Field, FormError, useApiForm } from '../../components/ui';
import { useApp } from '../../lib/app';
import { fmtDateTime } from '../../lib/time';

/** How often the card asks for the live status while it is on screen. */
const STATUS_POLL_MS = 2000;

const STATUS_LABEL: Record<MqttSettings['status'], string> = {
  disabled: 'Off',
  connecting: 'Connecting…',
  connected: 'Connected',
  error: 'Error',
};

interface Form {
  broker_url: string;
  username: string;
  /** Empty: keep the stored password. */
  password: string;
  discovery_prefix: string;
  topic_prefix: string;
  commands_enabled: boolean;
}

function formOf(s: MqttSettings): Form {
  return {
    broker_url: s.broker_url ?? '',
    username: s.username ?? '',
    password: '',
    discovery_prefix: s.discovery_prefix,
    topic_prefix: s.topic_prefix,
    commands_enabled: s.commands_enabled,
  };
}

/** What the form says, as a change: an empty user name removes it; an empty password keeps it. */
function changeOf(form: Form): MqttSettingsUpdate {
  return {
    broker_url: form.broker_url.trim() || null,
    username: form.username.trim() || null,
    ...(form.password ? { password: form.password } : {}),
    discovery_prefix: form.discovery_prefix.trim(),
    topic_prefix: form.topic_prefix.trim(),
    commands_enabled: form.commands_enabled,
  };
}

/**
 * Home Assistant through MQTT discovery: the broker, its login and the topic prefixes, a
 * connection test, and the live status. Once connected a "Chyme" device appears in Home Assistant.
 */
export function MqttCard() {
  const app = useApp();
  const [settings, setSettings] = useState<MqttSettings | null>(null);
  const [form, setForm] = useState<Form | null>(null);
  const [tested, setTested] = useState<MqttTest | null>(null);
  const { errors, busy, send } = useApiForm((p) => p in (form ?? {}) || p === 'tls_certificate_sha256');
  // Bumped when a change is sent and when its answer arrives: a poll asked before then answers
  // with the settings (and the error) from before the change, and must not cover the newer answer.
  const changes = useRef(0);
  const changed = (s: MqttSettings) => {
    changes.current++;
    setSettings(s);
  };

  // The live status: polled while the card is shown (connecting → connected takes a moment).
  useEffect(() => {
    const ctrl = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const load = async () => {
      const asked = changes.current;
      try {
        const s = await getMqtt(ctrl.signal);
        if (asked === changes.current) {
          setSettings(s);
          setForm((f) => f ?? formOf(s));
        }
      } catch {
        // shown as it was; the next poll tries again
      }
      if (!ctrl.signal.aborted) timer = setTimeout(() => void load(), STATUS_POLL_MS);
    };
    void load();
    return () => {
      ctrl.abort();
      clearTimeout(timer);
    };
  }, []);

  if (!settings || !form) {
    return (
      <section className="card" id="mqtt" aria-labelledby="mqtt-title">
        <header className="card__head">
          <h2 id="mqtt-title" tabIndex={-1}>
            Home Assistant (MQTT)
          </h2>
        </header>
        <p className="muted">Loading…</p>
      </section>
    );
  }

  async function save(enabled: boolean, e?: FormEvent) {
    e?.preventDefault();
    await send(async () => {
      changes.current++;
      const s = await updateMqtt({ ...changeOf(form!), enabled });
      changed(s);
      setForm(formOf(s));
      // A test result was about the form before this save; the status now speaks for the settings.
      setTested(null);
      app.toast(enabled ? 'MQTT saved: connecting to the broker.' : 'MQTT turned off; Home Assistant’s Chyme device is removed.');
    });
  }

  async function test() {
    setTested(null);
    await send(async () => setTested(await testMqtt(changeOf(form!))));
  }

  async function trust(fingerprint: string) {
    try {
      changes.current++;
      const s = await updateMqtt({ ...changeOf(form!), tls_certificate_sha256: fingerprint });
      changed(s);
      setTested(null);
      app.toast('Certificate trusted: Chyme connects only to a broker presenting it.');
    } catch (err) {
      app.toast(errorMessage(err), { tone: 'error' });
    }
  }

  const tone = settings.status === 'connected' ? 'positive' : settings.status === 'error' ? 'attention' : undefined;
  const set = (k: keyof Form, v: string | boolean) => setForm({ ...form, [k]: v });
  return (
    <section className="card" id="mqtt" aria-labelledby="mqtt-title" data-testid="mqtt-card">
      <header className="card__head">
        <h2 id="mqtt-title" tabIndex={-1}>
          Home Assistant (MQTT)
        </h2>
      </header>
      <p className="muted">
        Point Chyme at the MQTT broker Home Assistant uses (its Mosquitto add-on): a “Chyme” device appears with your digestive state,
        scores, calories today, last meal and ready-for-sleep time, without any YAML.
      </p>
      <p className="mqtt-status" role="status" aria-live="polite" data-testid="mqtt-status">
        <Chip tone={tone}>{STATUS_LABEL[settings.status]}</Chip>{' '}
        {settings.status === 'connected' && settings.connected_at ? <span className="muted">since {fmtDateTime(settings.connected_at, app.settings.timezone)}</span> : null}
        {settings.last_error && settings.status !== 'connected' ? <span> {settings.last_error}</span> : null}
      </p>
      <form className="stack" onSubmit={(e) => void save(true, e)} noValidate aria-label="MQTT settings">
        <FormError errors={errors} />
        <div className="grid grid--2">
          <Field label="Broker" error={errors.broker_url} hint="mqtt://homeassistant.local:1883, mqtts://… for TLS, or ws(s)://">
            {({ id, describedBy, invalid }) => (
              <input id={id} type="url" value={form.broker_url} placeholder="mqtt://homeassistant.local:1883" onChange={(e) => set('broker_url', e.target.value)} aria-describedby={describedBy} aria-invalid={invalid} autoComplete="off" />
            )}
          </Field>
          <Field label="User name" error={errors.username}>
            {({ id, describedBy, invalid }) => (
              <input id={id} type="text" value={form.username} onChange={(e) => set('username', e.target.value)} aria-describedby={describedBy} aria-invalid={invalid} autoComplete="off" />
            )}
          </Field>
          <Field label="Password" error={errors.password} hint={settings.has_password ? 'A password is stored; leave empty to keep it.' : 'Stored on this computer to log in; never shown again.'}>
            {({ id, describedBy, invalid }) => (
              <input id={id} type="password" value={form.password} onChange={(e) => set('password', e.target.value)} aria-describedby={describedBy} aria-invalid={invalid} autoComplete="new-password" />
            )}
          </Field>
          <Field label="Discovery prefix" error={errors.discovery_prefix} hint="Home Assistant’s (homeassistant unless you changed it).">
            {({ id, describedBy, invalid }) => (
              <input id={id} type="text" value={form.discovery_prefix} onChange={(e) => set('discovery_prefix', e.target.value)} aria-describedby={describedBy} aria-invalid={invalid} />
            )}
          </Field>
          <Field label="Topic prefix" error={errors.topic_prefix} hint="Where Chyme publishes its states.">
            {({ id, describedBy, invalid }) => (
              <input id={id} type="text" value={form.topic_prefix} onChange={(e) => set('topic_prefix', e.target.value)} aria-describedby={describedBy} aria-invalid={invalid} />
            )}
          </Field>
        </div>
        <label className="check">
          <input type="checkbox" checked={form.commands_enabled} onChange={(e) => set('commands_enabled', e.target.checked)} aria-describedby="mqtt-commands-note" />
          <span>Let Home Assistant log meals (a button per saved meal, and a “Log a meal” text box)</span>
        </label>
        <p className="muted small" id="mqtt-commands-note">
          Anyone who may publish to <code>{form.topic_prefix || 'chyme'}/command/…</code> on your broker can then log meals: the broker’s user
          accounts and ACLs are the boundary.
        </p>
        {tested ? (
          <div role="status" data-testid="mqtt-test-result">
            {tested.ok ? <p>The broker accepted the connection.</p> : <p className="row__warn">{tested.error}</p>}
            {!tested.ok && tested.tls_certificate_sha256 && /not trusted|not the pinned/.test(tested.error ?? '') ? (
              <ConfirmButton label="Trust this certificate" confirmLabel="Yes, trust exactly this certificate" onConfirm={() => void trust(tested.tls_certificate_sha256!)} />
            ) : null}
          </div>
        ) : null}
        {settings.tls_certificate_sha256 ? (
          <p className="muted small">
            Trusts only the broker certificate with SHA-256 fingerprint <code className="fingerprint">{settings.tls_certificate_sha256}</code>
          </p>
        ) : null}
        <div className="form-actions">
          <button type="submit" className="btn btn--primary" disabled={busy}>
            {settings.enabled ? 'Save' : 'Save and connect'}
          </button>
          <button type="button" className="btn" disabled={busy || !form.broker_url.trim()} onClick={() => void test()}>
            Test connection
          </button>
          {settings.enabled ? (
            <button type="button" className="btn" disabled={busy} onClick={() => void save(false)}>
              Turn off
            </button>
          ) : null}
        </div>
      </form>
    </section>
  );
}
