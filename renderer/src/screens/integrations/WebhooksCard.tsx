import { useState, type FormEvent } from 'react';
import { idempotencyKey } from '../../api/client';
import { WEBHOOK_EVENTS, type WebhookInput, type WebhookSubscription } from '../../api/types';
import { createWebhook, listWebhooks } from '../../api/webhooks';
import { Secret } from '../../components/Secret';
import { Empty, Field, FormError, ResourceStatus, useApiForm } from '../../components/ui';
import { useApp } from '../../lib/app';
import { useResource, useServiceEvents } from '../../lib/hooks';
import { WebhookRow } from './WebhookRow';

export function WebhooksCard() {
  const app = useApp();
  const subs = useResource((signal) => listWebhooks(signal), []);
  // The service tells the app live when it disables a failing subscription.
  useServiceEvents(['webhook_subscription.'], subs.reload, 300);
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<WebhookInput['events']>(['meal.created', 'digestion.state_changed']);
  const [secret, setSecret] = useState('');
  const { errors, busy, send } = useApiForm((p) => p === 'url' || p === 'secret' || p.startsWith('events'));
  const [created, setCreated] = useState<WebhookSubscription | null>(null);

  async function create(e: FormEvent) {
    e.preventDefault();
    await send(async () => {
      const s = await createWebhook({ url: url.trim(), events, ...(secret.trim() ? { secret: secret.trim() } : {}) }, idempotencyKey());
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
        <Secret
          title={`Signing secret for ${created.url}`}
          secret={created.secret}
          // The service signs every delivery with it, so it keeps the secret itself, not a hash.
          kept="Chyme keeps the secret itself in its database, because it signs every delivery with it, so its backups hold it too; exports never do. It is not shown again."
        >
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
