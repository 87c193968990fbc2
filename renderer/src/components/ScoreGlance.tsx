import type { ReactNode } from 'react';
import './ScoreGlance.css';

/** A score's number coloured by its level, with a label and a line of detail beside it. */
export function ScoreGlance({ score, level, label, detail }: { score: ReactNode; level: string | null; label: ReactNode; detail: ReactNode }) {
  return (
    <p className="score-glance">
      <span className={`score-num level--${level ?? 'none'}`}>{score}</span>
      <span>
        {label}
        <br />
        <span className="muted small">{detail}</span>
      </span>
    </p>
  );
}
