import { useState } from 'react';
import { Icon } from './ui';

/**
 * Copies `text` to the clipboard and says so for a moment: on the button (its name keeps the
 * visible "Copied", as axe's label-content-name-mismatch asks) and to screen readers through a
 * polite status.
 */
export function CopyButton({ text, label }: { text: string; label: string }) {
  const [done, setDone] = useState(false);
  return (
    <>
      <button
        type="button"
        className="btn btn--small btn--ghost"
        onClick={() =>
          void navigator.clipboard?.writeText(text).then(() => {
            setDone(true);
            setTimeout(() => setDone(false), 1500);
          })
        }
        aria-label={done ? `${label}: copied` : label}
      >
        <Icon name="copy" size={15} /> {done ? 'Copied' : 'Copy'}
      </button>
      <span className="visually-hidden" role="status">
        {done ? 'Copied' : ''}
      </span>
    </>
  );
}
