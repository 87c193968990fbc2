import { useState } from 'react';
import { errorMessage } from '../../api/client';
import type { WebhookSubscription, WebhookTest } from '../../api/types';
import { deleteWebhook, testWebhook, updateWebhook } from '../../api/webhooks';
import { ConfirmButton } from '../../components/ConfirmButton';
import { Chip } from '../../components/ui';
import { useApp } from '../../lib/app';
import { fmtDateTime } from '../../lib/time';
import { Deliveries } from './Deliveries';

export function WebhookRow({ sub, onChange, tz }: { sub: WebhookSubscription; onChange: () => void; tz: string }) {
  const app = useApp();
  const [test, setTest] = useState<WebhookTest | null>(null);
  const [testing, setTesting] = useState(false);
  const [open, setOpen] = useState(false);

  async function sendTest() {
    setTesting(true);
    setTest(null);
    try {
      setTest(await testWebhook(sub.id));
    } catch (err) {
      app.toast(errorMessage(err), { tone: 'error' });
    } finally {
      setTesting(false);
    }
  }

  async function setStatus(status: 'enabled' | 'disabled') {
    try {
      await updateWebhook(sub.id, { status });
      onChange();
      app.toast(status === 'enabled' ? 'Webhook resumed.' : 'Webhook paused: no deliveries until you resume it.');
    } catch (err) {
      app.toast(errorMessage(err), { tone: 'error' });
    }
  }

  async function remove() {
    try {
      await deleteWebhook(sub.id);
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
      {open ? <Deliveries subscriptionId={sub.id} tz={tz} refreshKey={test?.webhook_delivery_id ?? ''} /> : null}
    </li>
  );
}
