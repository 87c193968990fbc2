import type { ReactNode } from 'react';
import { CopyButton } from './CopyButton';
import './Secret.css';

/** A secret the service shows once (an API key, a signing secret), with a copy button. */
export function Secret({ title, secret, children }: { title: string; secret: string; children?: ReactNode }) {
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
