// The states' names and order are the service's own (the desktop tray and notifications use them too).
import { NEXT_STATE, STATE_LABEL } from '../../../server/digestion/vocabulary.js';
import type { DigestiveState } from '../api/types';
import { fmtDuration, fmtTimeOnDay } from '../lib/time';
import './Dial.css';

const BLURB: Record<DigestiveState['state'], string> = {
  processing: 'Your stomach is emptying a meal into the gut.',
  settling: 'The stomach is nearly empty; the gut is winding down.',
  fasted: 'Digestion has settled; the fasting pattern has returned.',
};

/** The overnight fast the model counts as good (MODEL.md: ≥ 13 h; Marinac 2016). */
const FAST_TARGET_MIN = 13 * 60;

export function confidenceLabel(c: number): string {
  if (c >= 0.65) return 'good';
  if (c >= 0.4) return 'moderate';
  return 'low';
}

/**
 * The live digestive-state dial. `remaining` is minutes_remaining ticked down locally since the
 * state was fetched; `now` is the service's clock.
 */
export function Dial({ state, remaining, now, tz }: { state: DigestiveState; remaining: number; now: number; tz: string }) {
  const since = Date.parse(state.since);
  const elapsed = Math.max(0, (now - since) / 60000);
  const fasted = state.state === 'fasted';
  const fraction = fasted ? Math.min(1, elapsed / FAST_TARGET_MIN) : elapsed / Math.max(1, elapsed + remaining);

  const size = 260;
  const stroke = 16;
  const r = (size - stroke) / 2 - 6;
  const c = 2 * Math.PI * r;
  const dash = Math.max(0.001, Math.min(1, fraction)) * c;
  const angle = fraction * 2 * Math.PI - Math.PI / 2;
  const knobX = size / 2 + r * Math.cos(angle);
  const knobY = size / 2 + r * Math.sin(angle);

  const headline = fasted ? `for ${fmtDuration(elapsed)}` : `${fmtDuration(remaining)} to ${NEXT_STATE[state.state]}`;

  return (
    <div className={`dial dial--${state.state}`} data-state={state.state}>
      <div className="dial__ring">
        <svg viewBox={`0 0 ${size} ${size}`} role="img" aria-labelledby="dial-title">
          <title id="dial-title">{`Digestive state: ${STATE_LABEL[state.state]}, ${headline}`}</title>
          <circle className="dial__track" cx={size / 2} cy={size / 2} r={r} strokeWidth={stroke} />
          <circle
            className="dial__arc"
            cx={size / 2}
            cy={size / 2}
            r={r}
            strokeWidth={stroke}
            strokeDasharray={`${dash} ${c}`}
            transform={`rotate(-90 ${size / 2} ${size / 2})`}
          />
          <circle className="dial__knob" cx={knobX} cy={knobY} r={stroke / 2 + 3} />
        </svg>
        <div className="dial__center" aria-hidden="true">
          <span className="dial__state" data-testid="dial-state">
            {STATE_LABEL[state.state]}
          </span>
          <span className="dial__remaining" data-testid="dial-remaining">
            {headline}
          </span>
          {fasted ? <span className="dial__sub">of a 13 h fast</span> : null}
        </div>
      </div>
      <p className="visually-hidden" aria-live="polite">{`Digestive state: ${STATE_LABEL[state.state]}`}</p>
      <p className="dial__blurb">{BLURB[state.state]}</p>
      <ol className="cycle" aria-label="Digestive cycle">
        {(['processing', 'settling', 'fasted'] as const).map((s) => (
          <li key={s} className={`cycle__step cycle__step--${s} ${s === state.state ? 'is-current' : ''}`} aria-current={s === state.state ? 'step' : undefined}>
            {STATE_LABEL[s]}
          </li>
        ))}
      </ol>
      <dl className="facts">
        <div>
          <dt>Since</dt>
          <dd data-testid="dial-since">{fmtTimeOnDay(state.since, now, tz)}</dd>
        </div>
        <div>
          <dt>{fasted ? 'Fasted from' : 'Fasted by'}</dt>
          <dd data-testid="dial-fasted-at">{state.fasted_at ? fmtTimeOnDay(state.fasted_at, now, tz) : '—'}</dd>
        </div>
        <div>
          <dt>Active meals</dt>
          <dd data-testid="dial-active">{state.active_meals}</dd>
        </div>
        <div>
          <dt>Confidence</dt>
          <dd>
            <span className="meter" aria-hidden="true">
              <span style={{ width: `${Math.round(state.confidence * 100)}%` }} />
            </span>
            {Math.round(state.confidence * 100)}% <span className="muted">({confidenceLabel(state.confidence)})</span>
          </dd>
        </div>
      </dl>
    </div>
  );
}
