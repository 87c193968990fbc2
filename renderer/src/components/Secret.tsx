import type { ReactNode } from 'react';
import { CopyButton } from './CopyButton';
import './Secret.css';

/**
 * A secret the service shows once (an API key, a signing secret), with a copy button. `kept` says
 * what Chyme keeps of it, which differs: only a hash of an API key, but the signing secret itself.
 */
export function Secret({ title, secret, kept, children }: { title: string; secret: string; kept: string; children?: ReactNode }) {
  return (
    <div className="secret" role="status" data-testid="secret">
      <p className="secret__title">{title}</p>
      <div className="secret__row">
        <code className="secret__value" data-testid="secret-value">
          {secret}
        </code>
        <CopyButton text={secret} label="Copy secret" />
      </div>
      <p className="muted small" data-testid="secret-kept">
        Shown once: store it now. {kept}
      </p>
      {children}
    </div>
  );
}
