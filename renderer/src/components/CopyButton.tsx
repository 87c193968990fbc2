import { useState } from 'react';
import { Icon } from './ui';

/** Copies `text` to the clipboard and says so for a moment. */
export function CopyButton({ text, label }: { text: string; label: string }) {
  const [done, setDone] = useState(false);
  return (
    <button
      type="button"
      className="btn btn--small btn--ghost"
      onClick={() =>
        void navigator.clipboard?.writeText(text).then(() => {
          setDone(true);
          setTimeout(() => setDone(false), 1500);
        })
      }
      aria-label={label}
    >
      <Icon name="copy" size={15} /> {done ? 'Copied' : 'Copy'}
    </button>
  );
}
