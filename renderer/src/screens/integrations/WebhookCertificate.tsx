import { useState } from 'react';
import { errorMessage } from '../../api/client';
import type { WebhookSubscription } from '../../api/types';
import { updateWebhook } from '../../api/webhooks';
import { ConfirmButton } from '../../components/ConfirmButton';
import { useApp } from '../../lib/app';
import { fmtDateTime } from '../../lib/time';
import './WebhookCertificate.css';

/**
 * An HTTPS webhook's certificate: the fingerprint the receiver presented (from the last attempt,
 * or the test just sent) and, for a self-signed receiver such as Home Assistant, the way to trust
 * exactly that certificate (a pin). Nothing is shown for http URLs.
 */
export function WebhookCertificate({
  sub,
  testedFingerprint,
  onChange,
  tz,
}: {
  sub: WebhookSubscription;
  /** The certificate the test just sent met, if any (newer than the subscription as loaded). */
  testedFingerprint: string | null | undefined;
  onChange: () => void;
  tz: string;
}) {
  const app = useApp();
  const [busy, setBusy] = useState(false);
  if (!/^https:/i.test(sub.url)) return null;
  const pinned = sub.tls_certificate_sha256;
  const seen = testedFingerprint ?? sub.observed_certificate_sha256;

  async function pin(fingerprint: string | null) {
    setBusy(true);
    try {
      await updateWebhook(sub.id, { tls_certificate_sha256: fingerprint });
      onChange();
      app.toast(fingerprint ? 'Certificate trusted: deliveries go only to a receiver presenting it.' : 'Pin removed: the certificate is verified as usual again.');
    } catch (err) {
      app.toast(errorMessage(err), { tone: 'error' });
    } finally {
      setBusy(false);
    }
  }

  return (
    <div className="certificate" data-testid="webhook-certificate">
      {pinned ? (
        <p className="certificate__line">
          Trusts only the certificate with SHA-256 fingerprint <code className="fingerprint">{pinned}</code>
        </p>
      ) : seen ? (
        <p className="certificate__line">
          The receiver presented a certificate with SHA-256 fingerprint <code className="fingerprint">{seen}</code>
          {!testedFingerprint && sub.observed_certificate_at ? <span className="muted"> (seen {fmtDateTime(sub.observed_certificate_at, tz)})</span> : null}
        </p>
      ) : null}
      {pinned && seen && seen !== pinned ? (
        <p className="row__warn" role="note">
          The receiver now presents a different certificate: <code className="fingerprint">{seen}</code>. If it got a new certificate, check
          its fingerprint and trust it instead.
        </p>
      ) : null}
      {!pinned && seen ? (
        <p className="muted small">
          A self-signed certificate (as Home Assistant often has) is refused unless you trust it. Compare this fingerprint with your
          receiver’s own (<code>openssl x509 -in cert.pem -noout -fingerprint -sha256</code>) before trusting it.
        </p>
      ) : null}
      <div className="certificate__actions">
        {seen && seen !== pinned ? (
          <ConfirmButton label="Trust this certificate" confirmLabel="Yes, trust exactly this certificate" onConfirm={() => void pin(seen)} />
        ) : null}
        {pinned ? <ConfirmButton label="Remove pin" confirmLabel="Verify as usual again" onConfirm={() => void pin(null)} /> : null}
        {busy ? <span className="muted small">Saving…</span> : null}
      </div>
    </div>
  );
}
