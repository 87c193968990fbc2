import { useState } from 'react';
import './ConfirmButton.css';

/** A destructive button that asks once more in place. */
export function ConfirmButton({ label, confirmLabel, onConfirm, className }: { label: string; confirmLabel: string; onConfirm: () => void; className?: string }) {
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
