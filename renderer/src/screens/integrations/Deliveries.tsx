import { errorMessage, idempotencyKey } from '../../api/client';
import type { DeliveryAttempt, WebhookDelivery } from '../../api/types';
import { listDeliveries, redeliver } from '../../api/webhooks';
import { Chip, Empty, ResourceStatus } from '../../components/ui';
import { useApp } from '../../lib/app';
import { useResource, useServiceEvents } from '../../lib/hooks';
import { fmtDateTime, fmtTime } from '../../lib/time';
import './Deliveries.css';

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

export function Deliveries({ subscriptionId, tz, refreshKey }: { subscriptionId: string; tz: string; refreshKey: string }) {
  const app = useApp();
  const list = useResource((signal) => listDeliveries(subscriptionId, { limit: 20 }, signal), [subscriptionId, refreshKey]);
  // Attempts land over about 31 s of retries; each one is announced on the live stream.
  useServiceEvents(['webhook_delivery.'], list.reload, 300);

  async function sendAgain(d: WebhookDelivery) {
    try {
      await redeliver(subscriptionId, d.id, idempotencyKey());
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
        <table className="delivery-table table--stack">
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
                  <td data-label="Outcome">
                    <Chip tone={o.tone}>{o.label}</Chip>
                    {d.status_detail ? <p className="muted small">{d.status_detail}</p> : null}
                    {d.status === 'pending' && d.next_attempt_at ? <p className="muted small">Next try {fmtTime(d.next_attempt_at, tz)}</p> : null}
                  </td>
                  <td data-label="Attempts">
                    <ol className="attempts">
                      {d.attempts.map((a) => (
                        <li key={a.attempt} className={`attempt attempt--${a.outcome}`}>
                          {attemptText(a)} <span className="muted">· {fmtTime(a.started_at, tz)}</span>
                        </li>
                      ))}
                    </ol>
                  </td>
                  <td>
                    <button type="button" className="btn btn--small btn--ghost" onClick={() => void sendAgain(d)} aria-label={`Redeliver ${d.event_type} from ${fmtDateTime(d.created_at, tz)}`}>
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
