import { memo, useMemo, useRef, useState } from 'react';
import { errorMessage, idempotencyKey } from '../api/client';
import { createMeal, deleteMeal } from '../api/meals';
import type { Meal } from '../api/types';
import { useApp } from '../lib/app';
import { capitalize, fmtNumber, groupByDay, leftOut, macroText, mealInput, mealNutrient, mealTitle, mealTotals, nutrientText, type OnMealsChange } from '../lib/meals';
import { addDays, clock, dayLabel, fmtMealTime, fmtTime, isoInZone, localTimeToInstant } from '../lib/time';
import { Icon } from './ui';
import './MealList.css';

/**
 * Delete, re-log and copy-a-day, each announced by a toast; delete and edits can be undone. Each
 * hands the screen what the service answered (`onChange`), so the screen shows it with the note.
 * The object is the same at every render (each action runs the latest render's), so rows (memo)
 * that take it render again only when their meal changed.
 */
export function useMealActions(onChange?: OnMealsChange) {
  const app = useApp();

  async function remove(meal: Meal) {
    // Taken now: the row (and this button) may be gone before the toast shows.
    const origin = document.activeElement;
    try {
      await deleteMeal(meal.id);
      onChange?.({ deleted: [meal.id] });
      app.toast(`Deleted “${mealTitle(meal)}”.`, {
        origin,
        action: {
          label: 'Undo',
          run: async () => {
            // The service has no undelete: the meal is logged again with the same content and time.
            const restored = await createMeal(mealInput(meal, isoInZone(Date.parse(meal.timestamp), app.tz)), idempotencyKey());
            onChange?.({ saved: [restored] });
            app.toast('Meal restored.');
            // Back to where the person was: the restored meal's Delete button.
            return { focus: `[data-meal-id="${restored.id}"] button[aria-label^="Delete "]` };
          },
        },
      });
    } catch (err) {
      app.toast(errorMessage(err), { tone: 'error' });
    }
  }

  /** Logs the same meal again, now. */
  async function relog(meal: Meal) {
    try {
      const created = await createMeal(mealInput(meal, isoInZone(clock.now(), app.tz)), idempotencyKey());
      onChange?.({ saved: [created] });
      app.toast(`Logged “${mealTitle(created)}” at ${fmtTime(created.timestamp, app.tz)}.`, {
        action: { label: 'Undo', run: () => deleteMeal(created.id).then(() => onChange?.({ deleted: [created.id] })) },
      });
    } catch (err) {
      app.toast(errorMessage(err), { tone: 'error' });
    }
  }

  /**
   * Copies every meal of one day to another day at the same times as they were lived (on the clock
   * where each was eaten), now on the zone's clock: each lands on `toDay` by the one rule for days.
   */
  async function copyDay(meals: readonly Meal[], fromDay: string, toDay: string) {
    const days = Math.round((Date.parse(toDay) - Date.parse(fromDay)) / 86_400_000);
    const created: Meal[] = [];
    try {
      for (const m of meals) {
        const lived = new Date(Date.parse(m.timestamp) + m.utc_offset_min * 60_000);
        const minute = lived.getUTCHours() * 60 + lived.getUTCMinutes();
        const at = localTimeToInstant(addDays(lived.toISOString().slice(0, 10), days), minute, app.tz) + lived.getUTCSeconds() * 1000;
        created.push(await createMeal(mealInput(m, isoInZone(at, app.tz)), idempotencyKey()));
      }
      onChange?.({ saved: created });
      app.toast(`Copied ${created.length} meal${created.length === 1 ? '' : 's'} to ${dayLabel(toDay, app.today)}.`, {
        action: {
          label: 'Undo',
          run: async () => {
            for (const c of created) await deleteMeal(c.id);
            onChange?.({ deleted: created.map((c) => c.id) });
          },
        },
      });
    } catch (err) {
      if (created.length) onChange?.({ saved: created });
      app.toast(`${errorMessage(err)} (${created.length} of ${meals.length} copied)`, { tone: 'error' });
    }
  }

  const latest = useRef({ remove, relog, copyDay });
  latest.current = { remove, relog, copyDay };
  return useMemo(
    () => ({
      remove: (meal: Meal) => latest.current.remove(meal),
      relog: (meal: Meal) => latest.current.relog(meal),
      copyDay: (meals: readonly Meal[], fromDay: string, toDay: string) => latest.current.copyDay(meals, fromDay, toDay),
    }),
    [],
  );
}

/** Memo: a meal added to the list renders its own row, not every row again. */
const MealRow = memo(function MealRow({ meal, actions }: { meal: Meal; actions: ReturnType<typeof useMealActions> }) {
  const app = useApp();
  const title = mealTitle(meal);
  // A number nobody gave reads "–", never 0.
  const macros = macroText(meal);
  return (
    <li className={`meal meal--${meal.meal_type}`} data-testid="meal-row" data-meal-id={meal.id}>
      <time className="meal__time" dateTime={meal.timestamp}>
        {fmtMealTime(meal, app.tz)}
      </time>
      <div className="meal__body">
        <p className="meal__title">
          <span className={`dot dot--${meal.meal_type}`} aria-hidden="true" />
          <span className="meal__type">{capitalize(meal.meal_type)}</span>
          <span className="meal__desc">{title}</span>
        </p>
        <p className="meal__macros">
          <strong>{nutrientText(meal, 'calories')} kcal</strong>
          {macros ? <span>{macros}</span> : null}
          {mealNutrient(meal, 'caffeine_mg') ? <span>{nutrientText(meal, 'caffeine_mg')} mg caffeine</span> : null}
        </p>
      </div>
      <div className="meal__actions">
        <button type="button" className="icon-btn" onClick={() => app.openMeal({ mode: 'edit', meal })} aria-label={`Edit ${title}`} title="Edit">
          <Icon name="edit" />
        </button>
        <button type="button" className="icon-btn" onClick={() => app.openMeal({ mode: 'copy', meal })} aria-label={`Copy ${title}`} title="Copy to the form">
          <Icon name="copy" />
        </button>
        <button type="button" className="icon-btn" onClick={() => void actions.relog(meal)} aria-label={`Log ${title} again now`} title="Log again now">
          <Icon name="repeat" />
        </button>
        <button type="button" className="icon-btn icon-btn--danger" onClick={() => void actions.remove(meal)} aria-label={`Delete ${title}`} title="Delete">
          <Icon name="trash" />
        </button>
      </div>
    </li>
  );
});

function CopyDay({ day, meals, actions }: { day: string; meals: Meal[]; actions: ReturnType<typeof useMealActions> }) {
  const app = useApp();
  const [open, setOpen] = useState(false);
  const [target, setTarget] = useState(app.today === day ? '' : app.today);
  const [busy, setBusy] = useState(false);
  if (!open) {
    return (
      <button type="button" className="btn btn--ghost btn--small" onClick={() => setOpen(true)}>
        <Icon name="copy" size={15} /> Copy day<span className="visually-hidden"> ({dayLabel(day, app.today)}) to another day</span>
      </button>
    );
  }
  return (
    <form
      className="copy-day"
      onSubmit={(e) => {
        e.preventDefault();
        if (!target || target === day) return;
        setBusy(true);
        void actions.copyDay(meals, day, target).finally(() => {
          setBusy(false);
          setOpen(false);
        });
      }}
    >
      <label>
        <span className="visually-hidden">Copy {dayLabel(day, app.today)} to</span>
        <span aria-hidden="true">to</span>
        <input type="date" value={target} onChange={(e) => setTarget(e.target.value)} required />
      </label>
      <button type="submit" className="btn btn--small btn--primary" disabled={busy || !target || target === day}>
        Copy {meals.length}
      </button>
      <button type="button" className="btn btn--small btn--ghost" onClick={() => setOpen(false)}>
        Cancel
      </button>
    </form>
  );
}

/**
 * A day's calories by the one totals rule: the meals that gave them, "–" when none did, and how
 * many meals the sum leaves out.
 */
function DayCalories({ meals }: { meals: readonly Meal[] }) {
  const { value, known, unknown } = mealTotals(meals).calories;
  return (
    <span className="muted" data-testid="day-kcal">
      {' '}
      · {known === 0 ? '–' : fmtNumber(value)} kcal
      {unknown > 0 && known > 0 ? <span className="meal-day__partial"> ({leftOut(unknown, 'calories')})</span> : null}
    </span>
  );
}

/**
 * Meals grouped by day, newest day first, each day with its total and a copy-day action. Memo: a
 * screen rendered again with the same meals (a reload started, a form's state) leaves it alone.
 */
export const MealList = memo(function MealList({ meals, onChange, emptyText }: { meals: readonly Meal[]; onChange?: OnMealsChange; emptyText?: string }) {
  const app = useApp();
  const actions = useMealActions(onChange);
  const groups = groupByDay(meals);
  if (!groups.length) return <p className="empty">{emptyText ?? 'No meals logged.'}</p>;
  return (
    <div className="meal-days">
      {groups.map(([day, list]) => (
        <section key={day} className="meal-day" aria-label={dayLabel(day, app.today)}>
          <header className="meal-day__head">
            <h3>
              {dayLabel(day, app.today)}
              <DayCalories meals={list} />
            </h3>
            <CopyDay day={day} meals={list} actions={actions} />
          </header>
          <ul className="meals" data-testid="meal-list">
            {list.map((m) => (
              <MealRow key={m.id} meal={m} actions={actions} />
            ))}
          </ul>
        </section>
      ))}
    </div>
  );
});
