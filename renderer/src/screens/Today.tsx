import { useEffect, useMemo, useRef, useState } from 'react';
import { getDigestiveState } from '../api/digestion';
import { getSnapshot } from '../api/snapshot';
import type { DailyScore, DigestiveState, Windows } from '../api/types';
import { Dial } from '../components/Dial';
import { QuickAdd } from '../components/MealForm';
import { MealList } from '../components/MealList';
import { ScoreGlance } from '../components/ScoreGlance';
import { Card, Chip, Empty, ErrorNote, Loading, ScreenHead } from '../components/ui';
import { useApp } from '../lib/app';
import { useMealChanges, useNow, useResource, useServiceEvents } from '../lib/hooks';
import { AFTER_LAST_MEAL, sleepReadyAt, sleepReadyText, tonightText } from '../lib/sleepReady';
import { capitalize, fmtNumber, leftOut, mealTotals, type MealTotals, type NutrientTotal } from '../lib/meals';
import { clock, fmtDay, fmtTimeOnDay } from '../lib/time';
import './Today.css';

/** Keeps a digestive state and the moment it was received, to tick minutes_remaining locally. */
interface LiveState {
  state: DigestiveState;
  receivedAt: number;
}

export function TodayScreen() {
  const app = useApp();
  // The first render is one call: the snapshot of the last 7 days.
  const snap = useResource(async (signal) => {
    const s = await getSnapshot(signal);
    clock.sync(s.generated_at);
    return s;
  }, []);
  // A meal added, logged again or deleted here shows in Today's meals and So far with its note, as
  // the service answered, rather than after the snapshot's reload (a second trip to the service);
  // the state, scores and windows, which the service derives, come with that reload.
  const mealsChanged = useMealChanges(
    snap,
    (s, update) => (s.nutrition?.meals ? { ...s, nutrition: { ...s.nutrition, meals: update(s.nutrition.meals) } } : s),
    (m) => m.day === app.today,
  );
  const [live, setLive] = useState<LiveState | null>(null);
  const now = useNow(15_000);

  // On the state object, not the snapshot: a meal amended into the snapshot (`mealsChanged`) keeps
  // the state received before it, and its countdown's start.
  const snapState = snap.data?.digestion?.state;
  useEffect(() => {
    if (snapState) setLive({ state: snapState, receivedAt: Date.now() });
  }, [snapState]);

  async function refreshState() {
    try {
      const st = await getDigestiveState();
      setLive({ state: st, receivedAt: Date.now() });
    } catch {
      /* the stream will bring the next change */
    }
  }

  useServiceEvents(['meal.', 'gut_score.created', 'overnight_score.created', 'windows.updated', 'settings.updated'], snap.reload, 250);
  useServiceEvents(['digestion.state_changed'], (ev) => {
    const st = ev.data.object as unknown as DigestiveState;
    if (st?.object === 'digestion.state' && st.state) setLive({ state: st, receivedAt: Date.now() });
    else void refreshState();
  }, 50);

  // minutes_remaining, ticked down locally between updates from the service.
  const remaining = live ? Math.max(0, live.state.minutes_remaining - Math.floor((Date.now() - live.receivedAt) / 60000)) : 0;

  // When the countdown runs out, the service announces the change within seconds; ask once in
  // case the stream is down.
  const askedFor = useRef<LiveState | null>(null);
  useEffect(() => {
    if (!live || live.state.state === 'fasted' || remaining > 0 || askedFor.current === live) return;
    askedFor.current = live;
    const t = setTimeout(() => void refreshState(), 8000);
    return () => clearTimeout(t);
  }, [live, remaining]);

  // For docs/performance.md: the first time Today shows its data (the e2e perf test reads it).
  const marked = useRef(false);
  useEffect(() => {
    if (snap.data && !marked.current) {
      marked.current = true;
      performance.mark('chyme:today-rendered');
    }
  }, [snap.data]);

  // The same array while the snapshot is the same: the list (memo) skips the screen's other renders
  // (the clock's ticks, the dial's).
  const meals = useMemo(() => (snap.data?.nutrition?.meals ?? []).filter((m) => m.day === app.today), [snap.data, app.today]);

  if (!snap.data) {
    return (
      <div className="screen">
        <ScreenHead title="Today" subtitle={fmtDay(app.today, 'long')} />
        {snap.error ? <ErrorNote error={snap.error} onRetry={snap.reload} /> : <Loading />}
      </div>
    );
  }

  const s = snap.data;
  const daily = s.digestion?.scores?.daily ?? [];
  const todayScore = daily.find((d) => d.date === app.today);
  const windows = s.digestion?.windows;
  const insights = (s.digestion?.insights ?? []).slice(0, 3);
  // So far: a meal logged for later counts once its time comes (`now` ticks every 15 s).
  const t = mealTotals(meals.filter((m) => Date.parse(m.timestamp) <= Math.max(now, clock.now())));
  const tonight = tonightText(windows?.tonight, Math.max(now, clock.now()), app.tz);
  // The headline already is the latest dinner time; the list keeps the other suggestions.
  const suggestions = (windows?.next_meal_suggestions ?? []).filter((x) => !(tonight && x.kind === 'latest_dinner'));

  return (
    <div className="screen" data-testid="today">
      <ScreenHead title="Today" subtitle={fmtDay(app.today, 'long')} />
      <div className="today-grid">
        <div className="today-side">
          <Card className="card--dial" title="Digestive state">
            {live ? <Dial state={live.state} remaining={remaining} now={Math.max(now, clock.now())} tz={app.tz} /> : <Empty>No state yet.</Empty>}
          </Card>
          <Card title="So far today">
            <SoFar totals={t} />
          </Card>
        </div>
        <div className="today-side">
          <Card title={tonight ? 'Tonight' : 'Ready for sleep'}>
            {tonight ? <Tonight text={tonight} /> : <SleepReady windows={windows} now={Math.max(now, clock.now())} />}
            {suggestions.length ? (
              <ul className="suggestions">
                {suggestions.map((s) => (
                  <li key={s.kind + s.at}>
                    <p className="suggestion__at">{suggestionTitle(s.kind, fmtTimeOnDay(s.at, Math.max(now, clock.now()), app.tz))}</p>
                    <p className="muted small">{s.reason}</p>
                  </li>
                ))}
              </ul>
            ) : null}
          </Card>
          <ScoreCard score={todayScore} onOpen={() => app.navigate('score')} />
        </div>
      </div>

      <div className="today-grid today-grid--lower">
        <Card
          title="Today’s meals"
          actions={
            <button type="button" className="btn btn--primary btn--small" onClick={() => app.navigate('log')}>
              Log a meal
            </button>
          }
        >
          <QuickAdd onSaved={mealsChanged} />
          <MealList meals={meals} onChange={mealsChanged} emptyText="Nothing logged yet today." />
        </Card>
        {insights.length ? (
          <Card title="Insights">
            <ul className="insights">
              {insights.map((i) => (
                <li key={i.id} className={`insight insight--${i.severity}`}>
                  <p className="insight__title">{i.title}</p>
                  <p className="insight__detail">{i.detail}</p>
                </li>
              ))}
            </ul>
          </Card>
        ) : null}
      </div>
    </div>
  );
}

const SO_FAR = [
  { key: 'protein_g', label: 'Protein', unit: 'g' },
  { key: 'carbs_g', label: 'Carbs', unit: 'g' },
  { key: 'fat_g', label: 'Fat', unit: 'g' },
  { key: 'caffeine_mg', label: 'Caffeine', unit: 'mg' },
] as const;

/** A total, or "–" when no meal gave it. */
function amount(total: NutrientTotal, unit: string): string {
  return total.known === 0 && total.unknown > 0 ? '–' : `${fmtNumber(total.value)} ${unit}`;
}

/**
 * What has been eaten so far. A total adds only the meals that gave the number, and says how many
 * it leaves out: a meal logged with calories only has no protein, not 0 g of it.
 */
function SoFar({ totals: t }: { totals: MealTotals }) {
  // One line per count of meals left out: "1 meal without protein, carbs or fat not counted."
  const missing = new Map<number, string[]>();
  for (const { key, label } of [{ key: 'calories', label: 'calories' } as const, ...SO_FAR]) {
    const total = t[key];
    if (total.unknown === 0 || total.known === 0) continue;
    missing.set(total.unknown, [...(missing.get(total.unknown) ?? []), label.toLowerCase()]);
  }
  return (
    <>
      <p className="totals__energy" data-testid="so-far-kcal">
        {amount(t.calories, '').trim()}
        <span>kcal</span>
      </p>
      <dl className="totals">
        {SO_FAR.map(({ key, label, unit }) => (
          <div key={key}>
            <dt>{label}</dt>
            <dd data-testid={`so-far-${key}`}>{amount(t[key], unit)}</dd>
          </div>
        ))}
      </dl>
      {[...missing].map(([n, names]) => (
        <p key={n} className="muted small" data-testid="so-far-partial">
          {leftOut(n, names.length > 1 ? `${names.slice(0, -1).join(', ')} or ${names.at(-1)}` : names[0]!)}.
        </p>
      ))}
    </>
  );
}

function ScoreCard({ score, onOpen }: { score: DailyScore | undefined; onOpen: () => void }) {
  return (
    <Card
      title="Gut score"
      actions={
        <button type="button" className="btn btn--ghost btn--small" onClick={onOpen}>
          Details
        </button>
      }
    >
      {score && score.score !== null ? (
        <ScoreGlance
          score={score.score}
          level={score.level}
          label={score.level ? capitalize(score.level) : ''}
          detail={`${score.score_state === 'PENDING' ? 'Provisional: the day is not over' : 'Scored'}${score.calibrating ? ' · calibrating' : ''}`}
        />
      ) : (
        <p className="muted" data-testid="today-score-none">
          No data: nothing is logged for today yet. The score starts with your first meal or a night’s sleep.
        </p>
      )}
      {score?.score_state ? <Chip tone={score.score_state.toLowerCase()}>{score.score_state}</Chip> : null}
    </Card>
  );
}

/** Once the person is up: the latest time to finish eating for tonight's usual bedtime. */
function Tonight({ text }: { text: NonNullable<ReturnType<typeof tonightText>> }) {
  return (
    <>
      <p className="muted small">{text.label}</p>
      <p className="big-time" data-testid="finish-eating-by">
        {text.time}
        <span className="big-time__rel">{text.when}</span>
      </p>
      <p className="muted small" data-testid="tonight-note">
        {text.note}
      </p>
    </>
  );
}

/** When lying down is fine, and what that time means at this point of the day. */
function SleepReady({ windows, now }: { windows: Windows | undefined; now: number }) {
  const app = useApp();
  if (!windows?.sleep_ready_at) {
    return (
      <>
        <p className="big-time muted">—</p>
        <p className="muted small">{AFTER_LAST_MEAL}</p>
      </>
    );
  }
  const text = sleepReadyText(sleepReadyAt(windows), now, app.tz);
  return (
    <>
      <p className="big-time" data-testid="sleep-ready">
        {text.time}
        <span className="big-time__rel">{text.when}</span>
      </p>
      <p className="muted small" data-testid="sleep-ready-note">
        {text.note}
      </p>
    </>
  );
}

function suggestionTitle(kind: string, time: string): string {
  if (kind === 'latest_dinner') return `Last meal by ${time}`;
  if (kind === 'eating_window_close') return `Eating window closes at ${time}`;
  return `${kind.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase())}: ${time}`;
}
