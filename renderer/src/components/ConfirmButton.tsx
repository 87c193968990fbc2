import { useState } from 'react';
import './ConfirmButton.css';

/**
 * A destructive button that asks once more in place. `ariaLabel` names the first button where its
 * visible label alone is ambiguous (one "Undo" per row).
 */
export function ConfirmButton({ label, confirmLabel, onConfirm, className, ariaLabel }: { label: string; confirmLabel: string; onConfirm: () => void; className?: string; ariaLabel?: string }) {
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
    <button type="button" className={`btn btn--small btn--ghost ${className ?? ''}`} onClick={() => setArmed(true)} aria-label={ariaLabel}>
      {label}
    </button>
  );
}
