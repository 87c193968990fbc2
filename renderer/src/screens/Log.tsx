import { useState } from 'react';
import { listMeals } from '../api/meals';
import type { Meal } from '../api/types';
import { MealForm, QuickAdd } from '../components/MealForm';
import { MealList, useMealActions } from '../components/MealList';
import { Card, Empty, ErrorNote, Icon, Loading, ScreenHead } from '../components/ui';
import { useApp } from '../lib/app';
import { useResource, useServiceEvents, useStoredState } from '../lib/hooks';
import { capitalize, contentKey, fmtNumber, mealTitle, recentDistinct, toFavourite, type Favourite } from '../lib/meals';
import { addDays } from '../lib/time';
import './Log.css';

const HISTORY_DAYS = 14;

/** A favourite or recent meal as one button that logs it again now. */
function RelogButton<M extends Favourite | Meal>({ meal, action, onLog }: { meal: M; action: string; onLog: (meal: M) => Promise<void> }) {
  return (
    <button type="button" className="relog__btn" onClick={() => void onLog(meal)}>
      <span className="visually-hidden">{action}: </span>
      <span className="relog__title">{mealTitle(meal)}</span>
      <span className="relog__meta">
        {capitalize(meal.meal_type)} · {fmtNumber(meal.macros.calories)} kcal
      </span>
    </button>
  );
}

export function LogScreen() {
  const app = useApp();
  // A draft handed over by another screen (edit / copy); taken once when the screen opens.
  const [draft, setDraft] = useState(() => app.takeDraft());
  const meals = useResource(
    (signal) =>
      listMeals({ start_date: addDays(app.today, -(HISTORY_DAYS - 1)), end_date: app.today }, signal),
    [app.today],
  );
  useServiceEvents(['meal.'], meals.reload, 250);
  const [favourites, setFavourites] = useStoredState<Favourite[]>('chyme.favourites', []);
  const actions = useMealActions(meals.reload);

  const recent = recentDistinct(meals.data ?? [], 8);
  const favKeys = new Set(favourites.map((f) => f.key));
  const toggleFavourite = (m: Meal) => {
    const key = contentKey(m);
    setFavourites((list) => (list.some((f) => f.key === key) ? list.filter((f) => f.key !== key) : [toFavourite(m), ...list].slice(0, 24)));
  };
  const lastWeek = (meals.data ?? []).filter((m) => m.day >= addDays(app.today, -6));

  return (
    <div className="screen" data-testid="log">
      <ScreenHead title="Meals" subtitle="Quick to log, easy to fix later." />
      <div className="log-grid">
        <Card className="card--form">
          <MealForm
            draft={draft}
            onDone={() => setDraft(null)}
            onSaved={meals.reload}
          />
        </Card>
        <div className="log-side">
          <Card title="Quick add">
            <QuickAdd onSaved={meals.reload} label="Calories, logged now" />
          </Card>
          <Card title="Favourites">
            {favourites.length ? (
              <ul className="relog">
                {favourites.map((f) => (
                  <li key={f.key}>
                    <RelogButton meal={f} action="Log now" onLog={actions.relog} />
                    <button
                      type="button"
                      className="icon-btn is-on"
                      aria-label={`Remove ${mealTitle(f)} from favourites`}
                      aria-pressed="true"
                      onClick={() => setFavourites((list) => list.filter((x) => x.key !== f.key))}
                    >
                      <Icon name="star" />
                    </button>
                  </li>
                ))}
              </ul>
            ) : (
              <Empty>Star a recent meal to keep it here. Favourites live on this device.</Empty>
            )}
          </Card>
          <Card title="Recent">
            {meals.error ? (
              <ErrorNote error={meals.error} onRetry={meals.reload} />
            ) : !meals.data ? (
              <Loading />
            ) : recent.length ? (
              <ul className="relog" data-testid="recent">
                {recent.map((m) => (
                  <li key={m.id}>
                    <RelogButton meal={m} action="Log again now" onLog={actions.relog} />
                    <button
                      type="button"
                      className={`icon-btn ${favKeys.has(contentKey(m)) ? 'is-on' : ''}`}
                      aria-label={`Favourite ${mealTitle(m)}`}
                      aria-pressed={favKeys.has(contentKey(m))}
                      onClick={() => toggleFavourite(m)}
                    >
                      <Icon name="star" />
                    </button>
                  </li>
                ))}
              </ul>
            ) : (
              <Empty>Meals you log appear here, ready to log again in one click.</Empty>
            )}
          </Card>
        </div>
      </div>
      <Card title="The last 7 days">
        {meals.data ? <MealList meals={lastWeek} onChange={meals.reload} emptyText="No meals in the last 7 days." /> : <Loading />}
      </Card>
    </div>
  );
}
