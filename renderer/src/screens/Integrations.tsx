import { useMemo, useRef, useState, type FormEvent, type MouseEvent, type ReactNode } from 'react';
import { api, errorMessage, idempotencyKey } from '../api/client';
import { WEBHOOK_EVENTS, type ApiKey, type DeliveryAttempt, type List, type Settings, type WebhookDelivery, type WebhookSubscription, type WebhookTest } from '../api/types';
import { Chip, Empty, Field, FormError, Icon, Loading, ResourceStatus, ScreenHead, useApiForm } from '../components/ui';
import { useApp } from '../lib/app';
import { useResource, useServiceEvents } from '../lib/hooks';
import { fmtDateTime, fmtTime } from '../lib/time';
import BackupsCard from './integrations/BackupsCard';

const SCOPES: { scope: string; what: string }[] = [
  { scope: 'nutrition:read', what: 'read meals' },
  { scope: 'nutrition:write', what: 'log, edit and delete meals' },
  { scope: 'digestion:read', what: 'scores, state, timeline, windows, insights' },
  { scope: 'sleep:read', what: 'read sleep sessions' },
  { scope: 'sleep:write', what: 'log and delete sleep' },
  { scope: 'webhooks:read', what: 'see webhooks and deliveries' },
  { scope: 'webhooks:write', what: 'manage and test webhooks' },
  { scope: 'admin', what: 'API keys, settings, export and import' },
];

const baseUrl = () => new URL('./v1', location.href).href;

export default function IntegrationsScreen() {
  return (
    <div className="screen" data-testid="integrations">
      <ScreenHead title="Integrations" subtitle="Connect scripts, dashboards and home automation to your own data." />
      <nav className="subnav" aria-label="Sections">
        <a href="#/integrations" onClick={(e) => jump(e, 'keys')}>API keys</a>
        <a href="#/integrations" onClick={(e) => jump(e, 'webhooks')}>Webhooks</a>
        <a href="#/integrations" onClick={(e) => jump(e, 'settings')}>Settings</a>
        <a href="#/integrations" onClick={(e) => jump(e, 'data')}>Export &amp; import</a>
        <a href="#/integrations" onClick={(e) => jump(e, 'backups')}>Backups</a>
      </nav>
      <ApiKeys />
      <Webhooks />
      <SettingsCard />
      <DataCard />
      <BackupsCard />
    </div>
  );
}

function jump(e: MouseEvent, id: string) {
  e.preventDefault();
  const el = document.getElementById(id);
  el?.scrollIntoView({ behavior: 'smooth', block: 'start' });
  el?.querySelector<HTMLElement>('h2')?.focus();
}

function CopyButton({ text, label }: { text: string; label: string }) {
  const [done, setDone] = useState(false);
  return (
    <button
      type="button"
      className="btn btn--small btn--ghost"
      onClick={() =>
        void navigator.clipboard?.writeText(text).then(() => {
          setDone(true);
          setTimeout(() => setDone(false), 1500);
        })
      }
      aria-label={label}
    >
      <Icon name="copy" size={15} /> {done ? 'Copied' : 'Copy'}
    </button>
  );
}

/** A destructive button that asks once more in place. */
function ConfirmButton({ label, confirmLabel, onConfirm, className }: { label: string; confirmLabel: string; onConfirm: () => void; className?: string }) {
  const [armed, setArmed] = useState(false);
  return armed ? (
    <span className="confirm">
      <button type="button" className={`btn btn--small btn--danger ${className ?? ''}`} onClick={() => (setArmed(false), onConfirm())} autoFocus>
        {confirmLabel}
      </button>
      <button type="button" className="btn btn--small btn--ghost" onClick={() => setArmed(false)}>
        Cancel
      </button>
    </span>
  ) : (
    <button type="button" className={`btn btn--small btn--ghost ${className ?? ''}`} onClick={() => setArmed(true)}>
      {label}
    </button>
  );
}

function Secret({ title, secret, children }: { title: string; secret: string; children?: ReactNode }) {
  return (
    <div className="secret" role="status" data-testid="secret">
      <p className="secret__title">{title}</p>
      <div className="secret__row">
        <code className="secret__value" data-testid="secret-value">
          {secret}
        </code>
        <CopyButton text={secret} label="Copy secret" />
      </div>
      <p className="muted small">Shown once. Chyme keeps only a hash of it: store it now.</p>
      {children}
    </div>
  );
}

function ApiKeys() {
  const app = useApp();
  const keys = useResource((signal) => api.get<List<ApiKey>>('/v1/api_keys', undefined, signal), []);
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<string[]>(['nutrition:read', 'digestion:read']);
  const { errors, busy, send } = useApiForm((p) => p === 'name' || p.startsWith('scopes'));
  const [created, setCreated] = useState<ApiKey | null>(null);

  async function create(e: FormEvent) {
    e.preventDefault();
    await send(async () => {
      const k = await api.post<ApiKey>('/v1/api_keys', { name: name.trim(), scopes }, idempotencyKey());
      setCreated(k);
      setName('');
      keys.reload();
    });
  }

  async function revoke(k: ApiKey) {
    try {
      await api.del(`/v1/api_keys/${encodeURIComponent(k.id)}`);
      keys.reload();
      app.toast(`Revoked “${k.name}”. Requests with it now fail.`);
    } catch (err) {
      app.toast(errorMessage(err), { tone: 'error' });
    }
  }

  const scopeError = Object.entries(errors).find(([k]) => k.startsWith('scopes'))?.[1];
  const curlPath = created?.scopes.includes('digestion:read') || !created ? '/digestion/state' : '/nutrition/meals?start_date=2025-01-01&end_date=2025-01-07';
  return (
    <section className="card" id="keys" aria-labelledby="keys-title">
      <header className="card__head">
        <h2 id="keys-title" tabIndex={-1}>
          API keys
        </h2>
      </header>
      <p className="muted">
        Base URL <code data-testid="base-url">{baseUrl()}</code> <CopyButton text={baseUrl()} label="Copy base URL" />
      </p>
      {created?.secret ? (
        <Secret title={`New key “${created.name}”`} secret={created.secret}>
          <p className="small">Try it:</p>
          <pre className="code" data-testid="curl-example">{`curl -H "Authorization: Bearer ${created.secret}" \\\n  ${baseUrl()}${curlPath}`}</pre>
          <button type="button" className="btn btn--small" onClick={() => setCreated(null)}>
            I’ve stored it
          </button>
        </Secret>
      ) : (
        <pre className="code">{`curl -H "Authorization: Bearer chy_…" \\\n  ${baseUrl()}/digestion/state`}</pre>
      )}
      <form className="stack" onSubmit={create} noValidate aria-label="Create an API key">
        <FormError errors={errors} />
        <Field label="Key name" error={errors.name} hint="Where it will be used, e.g. “Home Assistant”.">
          {({ id, describedBy, invalid }) => (
            <input id={id} type="text" value={name} onChange={(e) => setName(e.target.value)} aria-describedby={describedBy} aria-invalid={invalid} autoComplete="off" />
          )}
        </Field>
        <fieldset className={`checks ${scopeError ? 'field--invalid' : ''}`}>
          <legend>Scopes</legend>
          {SCOPES.map((s) => (
            <label key={s.scope} className="check">
              <input
                type="checkbox"
                checked={scopes.includes(s.scope)}
                onChange={(e) => setScopes((cur) => (e.target.checked ? [...cur, s.scope] : cur.filter((x) => x !== s.scope)))}
              />
              <span>
                <code>{s.scope}</code> <span className="muted">{s.what}</span>
              </span>
            </label>
          ))}
          {scopeError ? (
            <p className="field__error" role="alert">
              {scopeError}
            </p>
          ) : null}
        </fieldset>
        <div className="form-actions">
          <button type="submit" className="btn btn--primary" disabled={busy}>
            Create key
          </button>
        </div>
      </form>
      <h3 className="sub-title">Your keys</h3>
      <ResourceStatus resource={keys} />
      {keys.data ? (
        keys.data.data.length ? (
          <ul className="rows" data-testid="api-keys">
            {keys.data.data.map((k) => (
              <li key={k.id} className="row">
                <div className="row__main">
                  <p className="row__title">
                    {k.name} <code className="muted">{k.prefix}…</code>
                  </p>
                  <p className="row__meta">
                    {k.scopes.map((s) => (
                      <Chip key={s}>{s}</Chip>
                    ))}
                  </p>
                  <p className="row__meta muted small">
                    Created {fmtDateTime(k.created_at, app.tz)} · {k.last_used_at ? `last used ${fmtDateTime(k.last_used_at, app.tz)}` : 'never used'}
                  </p>
                </div>
                <ConfirmButton label="Revoke" confirmLabel={`Revoke ${k.name}`} onConfirm={() => void revoke(k)} />
              </li>
            ))}
          </ul>
        ) : (
          <Empty>No keys yet.</Empty>
        )
      ) : null}
    </section>
  );
}

function Webhooks() {
  const app = useApp();
  const subs = useResource((signal) => api.get<List<WebhookSubscription>>('/v1/webhooks', undefined, signal), []);
  // The service tells the app live when it disables a failing subscription.
  useServiceEvents(['webhook_subscription.'], subs.reload, 300);
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<string[]>(['meal.created', 'digestion.state_changed']);
  const [secret, setSecret] = useState('');
  const { errors, busy, send } = useApiForm((p) => p === 'url' || p === 'secret' || p.startsWith('events'));
  const [created, setCreated] = useState<WebhookSubscription | null>(null);

  async function create(e: FormEvent) {
    e.preventDefault();
    await send(async () => {
      const body: Record<string, unknown> = { url: url.trim(), events };
      if (secret.trim()) body.secret = secret.trim();
      const s = await api.post<WebhookSubscription>('/v1/webhooks', body, idempotencyKey());
      setCreated(s);
      setUrl('');
      setSecret('');
      subs.reload();
    });
  }

  const eventsError = Object.entries(errors).find(([k]) => k.startsWith('events'))?.[1];
  return (
    <section className="card" id="webhooks" aria-labelledby="webhooks-title">
      <header className="card__head">
        <h2 id="webhooks-title" tabIndex={-1}>
          Webhooks
        </h2>
      </header>
      <p className="muted">
        Chyme POSTs each event to your URL, signed with <code>X-Service-Signature</code> (HMAC-SHA256 of <code>timestamp.body</code>), retrying 5 times over about 31 seconds.
      </p>
      {created?.secret ? (
        <Secret title={`Signing secret for ${created.url}`} secret={created.secret}>
          <button type="button" className="btn btn--small" onClick={() => setCreated(null)}>
            I’ve stored it
          </button>
        </Secret>
      ) : null}
      <form className="stack" onSubmit={create} noValidate aria-label="Add a webhook">
        <FormError errors={errors} />
        <Field label="Endpoint URL" error={errors.url} hint="http or https; local and LAN addresses are fine.">
          {({ id, describedBy, invalid }) => (
            <input id={id} type="url" value={url} placeholder="http://homeassistant.local:8123/api/webhook/chyme" onChange={(e) => setUrl(e.target.value)} aria-describedby={describedBy} aria-invalid={invalid} autoComplete="off" />
          )}
        </Field>
        <fieldset className={`checks checks--cols ${eventsError ? 'field--invalid' : ''}`}>
          <legend>Events</legend>
          {WEBHOOK_EVENTS.map((ev) => (
            <label key={ev} className="check">
              <input type="checkbox" checked={events.includes(ev)} onChange={(e) => setEvents((cur) => (e.target.checked ? [...cur, ev] : cur.filter((x) => x !== ev)))} />
              <code>{ev}</code>
            </label>
          ))}
          {eventsError ? (
            <p className="field__error" role="alert">
              {eventsError}
            </p>
          ) : null}
        </fieldset>
        <Field label="Signing secret" error={errors.secret} hint="Optional, 16–256 characters. Left blank, Chyme generates one.">
          {({ id, describedBy, invalid }) => (
            <input id={id} type="text" value={secret} onChange={(e) => setSecret(e.target.value)} aria-describedby={describedBy} aria-invalid={invalid} autoComplete="off" />
          )}
        </Field>
        <div className="form-actions">
          <button type="submit" className="btn btn--primary" disabled={busy}>
            Add webhook
          </button>
        </div>
      </form>
      <h3 className="sub-title">Subscriptions</h3>
      <ResourceStatus resource={subs} />
      {subs.data ? (
        subs.data.data.length ? (
          <ul className="rows" data-testid="webhooks">
            {subs.data.data.map((s) => (
              <WebhookRow key={s.id} sub={s} onChange={subs.reload} tz={app.tz} />
            ))}
          </ul>
        ) : (
          <Empty>No webhooks yet.</Empty>
        )
      ) : null}
    </section>
  );
}

function WebhookRow({ sub, onChange, tz }: { sub: WebhookSubscription; onChange: () => void; tz: string }) {
  const app = useApp();
  const [test, setTest] = useState<WebhookTest | null>(null);
  const [testing, setTesting] = useState(false);
  const [open, setOpen] = useState(false);
  const base = `/v1/webhooks/${encodeURIComponent(sub.id)}`;

  async function sendTest() {
    setTesting(true);
    setTest(null);
    try {
      setTest(await api.post<WebhookTest>(`${base}/test`));
    } catch (err) {
      app.toast(errorMessage(err), { tone: 'error' });
    } finally {
      setTesting(false);
    }
  }

  async function setStatus(status: 'enabled' | 'disabled') {
    try {
      await api.patch(base, { status });
      onChange();
      app.toast(status === 'enabled' ? 'Webhook resumed.' : 'Webhook paused: no deliveries until you resume it.');
    } catch (err) {
      app.toast(errorMessage(err), { tone: 'error' });
    }
  }

  async function remove() {
    try {
      await api.del(base);
      onChange();
      app.toast('Webhook deleted.');
    } catch (err) {
      app.toast(errorMessage(err), { tone: 'error' });
    }
  }

  const disabled = sub.status === 'disabled';
  return (
    <li className={`row row--webhook ${disabled ? 'is-disabled' : ''}`} data-testid="webhook-row">
      <div className="row__main">
        <p className="row__title">
          <code>{sub.url}</code> <Chip tone={disabled ? 'attention' : 'positive'}>{disabled ? 'Disabled' : 'Enabled'}</Chip>
        </p>
        {disabled ? (
          <p className="row__warn" role="note">
            {sub.disabled_reason ?? 'Paused: no events are delivered until it is resumed.'}
          </p>
        ) : null}
        <p className="row__meta">
          {sub.events.map((e) => (
            <Chip key={e}>{e}</Chip>
          ))}
        </p>
        <p className="row__meta muted small">Added {fmtDateTime(sub.created_at, tz)}</p>
        {test ? (
          <p className={`test-result ${test.delivered ? 'is-ok' : 'is-bad'}`} role="status" data-testid="webhook-test-result">
            {test.delivered ? 'Delivered' : 'Not delivered'}
            {test.status_code ? ` · HTTP ${test.status_code}` : ''} · {Math.round(test.duration_ms)} ms
            {test.error ? ` · ${test.error}` : ''}
          </p>
        ) : null}
      </div>
      <div className="row__actions">
        <button type="button" className="btn btn--small" onClick={() => void sendTest()} disabled={testing}>
          {testing ? 'Sending…' : 'Send test'}
        </button>
        <button type="button" className="btn btn--small btn--ghost" onClick={() => void setStatus(disabled ? 'enabled' : 'disabled')}>
          {disabled ? 'Resume' : 'Pause'}
        </button>
        <button type="button" className="btn btn--small btn--ghost" aria-expanded={open} onClick={() => setOpen(!open)}>
          Deliveries
        </button>
        <ConfirmButton label="Delete" confirmLabel="Delete webhook" onConfirm={() => void remove()} />
      </div>
      {open ? <Deliveries base={base} tz={tz} refreshKey={test?.webhook_delivery_id ?? ''} /> : null}
    </li>
  );
}

const DELIVERY_STATUS: Record<WebhookDelivery['status'], { label: string; tone: string }> = {
  succeeded: { label: 'Delivered', tone: 'positive' },
  failed: { label: 'Failed', tone: 'attention' },
  pending: { label: 'Retrying', tone: 'pending' },
  canceled: { label: 'Canceled', tone: 'neutral' },
};

function attemptText(a: DeliveryAttempt): string {
  const what = a.status_code !== null ? `HTTP ${a.status_code}` : a.outcome === 'in_flight' ? 'in flight' : (a.error ?? a.outcome);
  return `#${a.attempt} ${what}${a.duration_ms !== null ? ` · ${a.duration_ms} ms` : ''}`;
}

function Deliveries({ base, tz, refreshKey }: { base: string; tz: string; refreshKey: string }) {
  const app = useApp();
  const list = useResource((signal) => api.get<List<WebhookDelivery>>(`${base}/deliveries`, { limit: 20 }, signal), [base, refreshKey]);
  // Attempts land over about 31 s of retries; each one is announced on the live stream.
  useServiceEvents(['webhook_delivery.'], list.reload, 300);

  async function redeliver(d: WebhookDelivery) {
    try {
      await api.post(`${base}/deliveries/${encodeURIComponent(d.id)}/redeliver`, undefined, idempotencyKey());
      app.toast('Queued to send again.');
      list.reload();
    } catch (err) {
      app.toast(errorMessage(err), { tone: 'error' });
    }
  }

  return (
    <div className="deliveries" data-testid="deliveries">
      <ResourceStatus resource={list} />
      {list.data && !list.data.data.length ? <Empty>No deliveries yet.</Empty> : null}
      {list.data?.data.length ? (
        <table className="delivery-table">
          <caption>Recent deliveries</caption>
          <thead>
            <tr>
              <th scope="col">Event</th>
              <th scope="col">Outcome</th>
              <th scope="col">Attempts</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.data.data.map((d) => {
              const o = DELIVERY_STATUS[d.status] ?? { label: d.status, tone: 'neutral' };
              return (
                <tr key={d.id} data-testid="delivery-row">
                  <th scope="row">
                    <code>{d.event_type}</code>
                    {d.kind !== 'event' ? <span className="muted small"> ({d.kind})</span> : null}
                    <br />
                    <span className="muted small">{fmtDateTime(d.created_at, tz)}</span>
                  </th>
                  <td>
                    <Chip tone={o.tone}>{o.label}</Chip>
                    {d.status_detail ? <p className="muted small">{d.status_detail}</p> : null}
                    {d.status === 'pending' && d.next_attempt_at ? <p className="muted small">Next try {fmtTime(d.next_attempt_at, tz)}</p> : null}
                  </td>
                  <td>
                    <ol className="attempts">
                      {d.attempts.map((a) => (
                        <li key={a.attempt} className={`attempt attempt--${a.outcome}`}>
                          {attemptText(a)} <span className="muted">· {fmtTime(a.started_at, tz)}</span>
                        </li>
                      ))}
                    </ol>
                  </td>
                  <td>
                    <button type="button" className="btn btn--small btn--ghost" onClick={() => void redeliver(d)} aria-label={`Redeliver ${d.event_type} from ${fmtDateTime(d.created_at, tz)}`}>
                      Redeliver
                    </button>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      ) : null}
    </div>
  );
}

function SettingsCard() {
  const app = useApp();
  const zones = useMemo(() => {
    const list = (Intl as unknown as { supportedValuesOf?: (k: string) => string[] }).supportedValuesOf?.('timeZone') ?? [];
    return list.includes(app.settings.timezone) ? list : [app.settings.timezone, ...list];
  }, [app.settings.timezone]);
  const [form, setForm] = useState({ timezone: app.settings.timezone, day_start: app.settings.day_start, units: app.settings.units });
  const { errors, busy, send } = useApiForm((p) => p in form);
  const unitOptions = Array.from(new Set([app.settings.units, 'metric', 'imperial']));

  async function save(e: FormEvent) {
    e.preventDefault();
    await send(async () => {
      const s = await api.patch<Settings>('/v1/settings', form);
      app.setSettings(s);
      app.toast('Settings saved. Scores and days are recomputed for them.');
    });
  }

  return (
    <section className="card" id="settings" aria-labelledby="settings-title">
      <header className="card__head">
        <h2 id="settings-title" tabIndex={-1}>
          Settings
        </h2>
      </header>
      <form className="stack" onSubmit={save} noValidate aria-label="Settings">
        <FormError errors={errors} />
        <div className="grid grid--3">
          <Field label="Time zone" error={errors.timezone}>
            {({ id, describedBy, invalid }) => (
              <select id={id} value={form.timezone} onChange={(e) => setForm({ ...form, timezone: e.target.value })} aria-describedby={describedBy} aria-invalid={invalid}>
                {zones.map((z) => (
                  <option key={z} value={z}>
                    {z.replace(/_/g, ' ')}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field label="Day starts at" error={errors.day_start} hint="Meals before it count for the previous day.">
            {({ id, describedBy, invalid }) => (
              <input id={id} type="time" value={form.day_start} onChange={(e) => setForm({ ...form, day_start: e.target.value })} aria-describedby={describedBy} aria-invalid={invalid} />
            )}
          </Field>
          <Field label="Units" error={errors.units} hint="Stored for integrations; nutrition shows kcal, g and mg either way.">
            {({ id, describedBy, invalid }) => (
              <select id={id} value={form.units} onChange={(e) => setForm({ ...form, units: e.target.value })} aria-describedby={describedBy} aria-invalid={invalid}>
                {unitOptions.map((u) => (
                  <option key={u} value={u}>
                    {u[0]!.toUpperCase() + u.slice(1)}
                  </option>
                ))}
              </select>
            )}
          </Field>
        </div>
        <div className="form-actions">
          <button type="submit" className="btn btn--primary" disabled={busy}>
            Save settings
          </button>
        </div>
      </form>
      {window.chyme ? <NotificationPrefs /> : null}
    </section>
  );
}

/** Desktop only: which state changes raise a native notification. */
function NotificationPrefs() {
  const bridge = window.chyme!;
  const prefs = useResource(() => bridge.getNotificationPrefs(), []);
  const [saving, setSaving] = useState(false);
  if (!prefs.data) return null;
  const current = prefs.data;
  const toggle = async (k: keyof ChymeNotificationPrefs) => {
    setSaving(true);
    try {
      await bridge.setNotificationPrefs({ ...current, [k]: !current[k] });
      prefs.reload();
    } finally {
      setSaving(false);
    }
  };
  return (
    <fieldset className="checks" disabled={saving}>
      <legend>Desktop notifications when digestion becomes…</legend>
      {(['processing', 'settling', 'fasted'] as const).map((k) => (
        <label key={k} className="check">
          <input type="checkbox" checked={current[k]} onChange={() => void toggle(k)} />
          <span>{k[0]!.toUpperCase() + k.slice(1)}</span>
        </label>
      ))}
    </fieldset>
  );
}

async function download(path: string, fallbackName: string) {
  const { blob, filename } = await api.blob(path);
  const href = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = href;
  a.download = filename ?? fallbackName;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(href), 10_000);
}

interface ImportResult {
  object: 'import_result';
  meals: { imported: number; skipped: number };
  sleep_sessions: { imported: number; skipped: number };
  settings: 'applied' | 'kept';
}

function summarize(r: ImportResult): string {
  const part = (n: { imported: number; skipped: number }, what: string) =>
    `${n.imported} ${what} imported${n.skipped ? `, ${n.skipped} already here (skipped)` : ''}`;
  return `${part(r.meals, 'meals')}; ${part(r.sleep_sessions, 'sleep sessions')}. Settings ${r.settings === 'applied' ? 'restored' : 'kept as they are'}.`;
}

function DataCard() {
  const app = useApp();
  const fileRef = useRef<HTMLInputElement>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [result, setResult] = useState<{ ok: boolean; text: string } | null>(null);
  const stamp = app.today;

  async function run(label: string, fn: () => Promise<void>) {
    setBusy(label);
    try {
      await fn();
    } catch (err) {
      setResult({ ok: false, text: errorMessage(err) });
    } finally {
      setBusy(null);
    }
  }

  async function importFile(file: File) {
    await run('import', async () => {
      let doc: unknown;
      try {
        doc = JSON.parse(await file.text());
      } catch {
        setResult({ ok: false, text: `${file.name} is not JSON. Choose a file made by “Export everything”.` });
        return;
      }
      const res = await api.post<ImportResult>('/v1/import', doc, idempotencyKey());
      setResult({ ok: true, text: `Imported ${file.name}. ${summarize(res)}` });
    });
    if (fileRef.current) fileRef.current.value = '';
  }

  return (
    <section className="card" id="data" aria-labelledby="data-title">
      <header className="card__head">
        <h2 id="data-title" tabIndex={-1}>
          Export &amp; import
        </h2>
      </header>
      <p className="muted">Your data is one file on this machine. Take it with you any time.</p>
      <div className="button-row">
        <button type="button" className="btn" disabled={busy !== null} onClick={() => void run('json', () => download('/v1/export', `chyme-export-${stamp}.json`))} data-testid="export-json">
          <Icon name="download" size={16} /> Export everything (JSON)
        </button>
        <button type="button" className="btn" disabled={busy !== null} onClick={() => void run('csv', () => download('/v1/export/meals.csv', `chyme-meals-${stamp}.csv`))} data-testid="export-csv">
          <Icon name="download" size={16} /> Meals as CSV
        </button>
      </div>
      <div className="field">
        <label htmlFor="import-file">Import a JSON export</label>
        <input
          id="import-file"
          ref={fileRef}
          type="file"
          accept="application/json,.json"
          disabled={busy !== null}
          onChange={(e) => {
            const f = e.target.files?.[0];
            if (f) void importFile(f);
          }}
          aria-describedby="import-hint"
        />
        <p className="field__hint" id="import-hint">
          Everything is checked before anything is written; records that already exist are skipped.
        </p>
      </div>
      {busy ? <Loading label={busy === 'import' ? 'Importing' : 'Preparing download'} /> : null}
      {result ? (
        <p className={`test-result ${result.ok ? 'is-ok' : 'is-bad'}`} role="status" data-testid="import-result">
          {result.text}
        </p>
      ) : null}
    </section>
  );
}
