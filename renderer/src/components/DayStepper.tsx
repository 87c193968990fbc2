import { useApp } from '../lib/app';
import { addDays } from '../lib/time';
import { Icon } from './ui';
import './DayStepper.css';

/**
 * Previous / a date field / next, and a button back to today: picks the day a screen shows.
 * `step` is how far the arrows move (7 for a week view); `min` and `max` bound the choice.
 */
export function DayStepper(props: { day: string; onChange: (day: string) => void; step?: number; unit?: 'day' | 'week'; label?: string; min?: string; max?: string }) {
  const app = useApp();
  const { day, onChange, step = 1, unit = 'day' } = props;
  const inRange = (d: string) => (!props.min || d >= props.min) && (!props.max || d <= props.max);
  const back = addDays(day, -step);
  const forward = addDays(day, step);
  return (
    <div className="stepper">
      <button type="button" className="icon-btn" onClick={() => onChange(back)} disabled={!inRange(back)} aria-label={unit === 'day' ? 'Previous day' : 'Previous week'}>
        <Icon name="chevronLeft" />
      </button>
      <label>
        <span className="visually-hidden">{props.label ?? 'Day'}</span>
        <input type="date" value={day} min={props.min} max={props.max} onChange={(e) => e.target.value && inRange(e.target.value) && onChange(e.target.value)} />
      </label>
      <button type="button" className="icon-btn" onClick={() => onChange(forward)} disabled={!inRange(forward)} aria-label={unit === 'day' ? 'Next day' : 'Next week'}>
        <Icon name="chevronRight" />
      </button>
      <button type="button" className="btn btn--ghost btn--small" onClick={() => onChange(app.today)} disabled={day === app.today}>
        Today
      </button>
    </div>
  );
}
