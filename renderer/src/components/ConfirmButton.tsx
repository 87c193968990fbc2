import { useState } from 'react';
import './ConfirmButton.css';

/**
 * A destructive button that asks once more in place. `ariaLabel` names the first button where its
 * visible label alone is ambiguous (one "Undo" per row); `describedBy` ties both buttons to the
 * sentence saying what the action does, which a screen reader then reads with them.
 */
export function ConfirmButton({
  label,
  confirmLabel,
  onConfirm,
  className,
  ariaLabel,
  describedBy,
  disabled,
}: {
  label: string;
  confirmLabel: string;
  onConfirm: () => void;
  className?: string;
  ariaLabel?: string;
  describedBy?: string;
  disabled?: boolean;
}) {
  const [armed, setArmed] = useState(false);
  return armed ? (
    <span className="confirm">
      <button type="button" className={`btn btn--small btn--danger ${className ?? ''}`} onClick={() => (setArmed(false), onConfirm())} aria-describedby={describedBy} disabled={disabled} autoFocus>
        {confirmLabel}
      </button>
      <button type="button" className="btn btn--small btn--ghost" onClick={() => setArmed(false)}>
        Cancel
      </button>
    </span>
  ) : (
    <button type="button" className={`btn btn--small btn--ghost ${className ?? ''}`} onClick={() => setArmed(true)} aria-label={ariaLabel} aria-describedby={describedBy} disabled={disabled}>
      {label}
    </button>
  );
}
