import { useCallback, useEffect, useMemo, useState } from 'react';
import { errorMessage, idempotencyKey } from '../api/client';
import { deleteMeal, listMeals } from '../api/meals';
import { createSavedMeal, deleteSavedMeal, listSavedMeals } from '../api/saved-meals';
import type { Meal, SavedMeal } from '../api/types';
import { MealForm, QuickAdd } from '../components/MealForm';
import { MealList, useMealActions } from '../components/MealList';
import { Card, Empty, ErrorNote, Icon, Loading, ScreenHead } from '../components/ui';
import { useApp } from '../lib/app';
import { useMealChanges, useResource, useServiceEvents } from '../lib/hooks';
import { capitalize, entrySumNumbers, guessMealType, macroText, mealTitle, nutrientText, recentDistinct, storedEntryInput, type OnMealsChange } from '../lib/meals';
import { logSavedMeal, migrateFavourites, onSavedMealsChanged, savedMealFrom } from '../lib/saved-meals';
import { addDays, clock, fmtTime, isoInZone, localParts } from '../lib/time';
import './Log.css';

const HISTORY_DAYS = 14;

/** A saved or recent meal as one button that logs it again now. */
function RelogButton({ title, meta, action, onLog }: { title: string; meta: string; action: string; onLog: () => void }) {
  return (
    <button type="button" className="relog__btn" onClick={onLog}>
      <span className="visually-hidden">{action}: </span>
      <span className="relog__title">{title}</span>
      <span className="relog__meta">{meta}</span>
    </button>
  );
}

/** The saved meals (`/v1/nutrition/saved_meals`) and what the Log screen does with them. */
function useSavedMeals(onLogged: OnMealsChange) {
  const app = useApp();
  const saved = useResource((signal) => listSavedMeals(signal), []);
  useEffect(() => onSavedMealsChanged(saved.reload), [saved.reload]);

  // Favourites kept in this browser before saved meals existed move to the service, once.
  useEffect(() => {
    migrateFavourites()
      .then((moved) => {
        if (moved) app.toast(`Moved ${moved} favourite${moved === 1 ? '' : 's'} from this browser to saved meals.`);
      })
      .catch((err: unknown) => app.toast(`Favourites could not be moved to saved meals yet: ${errorMessage(err)}`, { tone: 'error' }));
  }, []);

  async function log(s: SavedMeal) {
    try {
      const now = clock.now();
      const p = localParts(now, app.tz);
      const created = await logSavedMeal(s, isoInZone(now, app.tz), guessMealType(p.hour * 60 + p.minute));
      onLogged({ saved: [created] });
      app.toast(`Logged “${s.name}” at ${fmtTime(created.timestamp, app.tz)}.`, {
        action: { label: 'Undo', run: () => deleteMeal(created.id).then(() => onLogged({ deleted: [created.id] })) },
      });
    } catch (err) {
      app.toast(errorMessage(err), { tone: 'error' });
    }
  }

  async function remove(s: SavedMeal) {
    // Taken now: the saved meal's row (and this button) may be gone before the toast shows.
    const origin = document.activeElement;
    try {
      await deleteSavedMeal(s.id);
      saved.reload();
      app.toast(`Removed “${s.name}” from saved meals.`, {
        origin,
        action: {
          label: 'Undo',
          run: async () => {
            await createSavedMeal({ name: s.name, meal_type: s.meal_type, foods: s.foods.map(storedEntryInput) }, idempotencyKey());
            saved.reload();
          },
        },
      });
    } catch (err) {
      app.toast(errorMessage(err), { tone: 'error' });
    }
  }

  async function saveMeal(m: Meal) {
    try {
      const created = await createSavedMeal(savedMealFrom(m), idempotencyKey());
      saved.reload();
      app.toast(`Saved “${created.name}”: log it again in one click.`);
    } catch (err) {
      app.toast(errorMessage(err), { tone: 'error' });
    }
  }

  return { saved, log, remove, saveMeal };
}

/** A saved meal's type and totals; a nutrient none of its foods gives reads "–", never 0. */
function savedMeta(s: SavedMeal): string {
  const numbers = entrySumNumbers(s.totals);
  const parts = [`${nutrientText(numbers, 'calories')} kcal`];
  const macros = macroText(numbers);
  if (macros) parts.push(macros);
  return `${s.meal_type ? `${capitalize(s.meal_type)} · ` : ''}${parts.join(' · ')}`;
}

export function LogScreen() {
  const app = useApp();
  // A draft handed over by another screen (edit / copy); taken once when the screen opens.
  const [draft, setDraft] = useState(() => app.takeDraft());
  const start = addDays(app.today, -(HISTORY_DAYS - 1));
  const meals = useResource((signal) => listMeals({ start_date: start, end_date: app.today }, signal), [app.today]);
  useServiceEvents(['meal.'], meals.reload, 250);
  // A meal logged, saved or deleted here shows in the list with its note, as the service answered,
  // rather than after the list's reload (a second trip to the service). Stable, as `onDone`: the
  // form (memo) does not render again with the list.
  const mealsChanged = useMealChanges(meals, (list, update) => update(list), (m) => m.day >= start && m.day <= app.today);
  const onDone = useCallback(() => setDraft(null), []);
  const actions = useMealActions(mealsChanged);
  const savedMeals = useSavedMeals(mealsChanged);

  const recent = recentDistinct(meals.data ?? [], 8);
  const savedByName = new Map((savedMeals.saved.data ?? []).map((s) => [s.name, s]));
  // The same array while the meals are the same: the list (memo) skips the screen's other renders.
  const lastWeek = useMemo(() => (meals.data ?? []).filter((m) => m.day >= addDays(app.today, -6)), [meals.data, app.today]);

  return (
    <div className="screen" data-testid="log">
      <ScreenHead title="Meals" subtitle="Quick to log, easy to fix later." />
      <div className="log-grid">
        <Card className="card--form">
          <MealForm draft={draft} onDone={onDone} onSaved={mealsChanged} />
        </Card>
        <div className="log-side">
          <Card title="Quick add">
            <QuickAdd onSaved={mealsChanged} label="Calories, logged now" />
          </Card>
          <Card title="Saved meals">
            {savedMeals.saved.error ? (
              <ErrorNote error={savedMeals.saved.error} onRetry={savedMeals.saved.reload} />
            ) : !savedMeals.saved.data ? (
              <Loading />
            ) : savedMeals.saved.data.length ? (
              <ul className="relog" data-testid="saved-meals">
                {savedMeals.saved.data.map((s) => (
                  <li key={s.id}>
                    <RelogButton title={s.name} meta={savedMeta(s)} action="Log now" onLog={() => void savedMeals.log(s)} />
                    <button type="button" className="icon-btn icon-btn--danger" aria-label={`Remove ${s.name} from saved meals`} title="Remove" onClick={() => void savedMeals.remove(s)}>
                      <Icon name="trash" />
                    </button>
                  </li>
                ))}
              </ul>
            ) : (
              <Empty>Build a meal and choose “Save as a meal”, or star a recent meal, to log it again here in one click.</Empty>
            )}
          </Card>
          <Card title="Recent">
            {meals.error ? (
              <ErrorNote error={meals.error} onRetry={meals.reload} />
            ) : !meals.data ? (
              <Loading />
            ) : recent.length ? (
              <ul className="relog" data-testid="recent">
                {recent.map((m) => {
                  const title = mealTitle(m);
                  const savedAs = savedByName.get(title);
                  return (
                    <li key={m.id}>
                      <RelogButton title={title} meta={`${capitalize(m.meal_type)} · ${nutrientText(m, 'calories')} kcal`} action="Log again now" onLog={() => void actions.relog(m)} />
                      <button
                        type="button"
                        className={`icon-btn ${savedAs ? 'is-on' : ''}`}
                        aria-label={`Save ${title} as a meal`}
                        aria-pressed={Boolean(savedAs)}
                        title={savedAs ? 'Saved: remove from saved meals' : 'Save as a meal'}
                        onClick={() => void (savedAs ? savedMeals.remove(savedAs) : savedMeals.saveMeal(m))}
                      >
                        <Icon name="star" />
                      </button>
                    </li>
                  );
                })}
              </ul>
            ) : (
              <Empty>Meals you log appear here, ready to log again in one click.</Empty>
            )}
          </Card>
        </div>
      </div>
      <Card title="The last 7 days">
        {meals.data ? <MealList meals={lastWeek} onChange={mealsChanged} emptyText="No meals in the last 7 days." /> : <Loading />}
      </Card>
    </div>
  );
}
