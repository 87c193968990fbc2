import { memo, useEffect, useMemo, useRef, useState, type CSSProperties, type FormEvent, type ReactNode } from 'react';
import { Area, Bar, BarChart, CartesianGrid, ComposedChart, Line, ReferenceArea, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { ApiError, errorMessage, idempotencyKey } from '../api/client';
import { listDailyScores, listOvernightScores } from '../api/digestion';
import { createSleep, deleteSleep, listSleep } from '../api/sleep';
import {
  COMPONENT_NAMES,
  type ComponentName,
  type Contribution,
  type DailyScore,
  type OvernightScore,
  type SleepInput,
  type SleepSession,
} from '../api/types';
import { DayStepper } from '../components/DayStepper';
import { ScoreGlance } from '../components/ScoreGlance';
import { Card, Chip, Empty, Field, FormError, Icon, Loading, ResourceStatus, ScreenHead, Segmented, useApiForm, type FieldErrors } from '../components/ui';
import { useApp } from '../lib/app';
import { useResource, useServiceEvents } from '../lib/hooks';
import { capitalize, fmtNumber } from '../lib/meals';
import { findOverlap, overlapMessage, overlapSearchDays } from '../lib/sleep';
import { addDays, dayLabel, fmtDateTime, fmtDay, fmtDuration, fmtTime, fromLocalInput, iso, localTimeToInstant, toLocalInput } from '../lib/time';
import './Score.css';

const COMPONENT_INFO: Record<ComponentName, { title: string; moves: string }> = {
  overnight: {
    title: 'Overnight',
    moves:
      'Rises with three hours or more between your last meal and sleep, fewer late calories and less late caffeine. Without logged sleep it is estimated from your last meal and your usual bedtime.',
  },
  fasted_ratio: {
    title: 'Fasting rhythm',
    moves: 'Rises with an overnight fast of 13 hours or more and an eating span of 12 hours or less; spans over 14 hours pull it down.',
  },
  regularity: {
    title: 'Regularity',
    moves: 'Rises when you eat at similar times each day: it follows how much the middle of your eating window moved over the last 14 days.',
  },
  circadian: {
    title: 'Daytime eating',
    moves: 'Rises when most calories come earlier in the day; it drops when over a quarter arrive after 20:00 or within 3 hours of sleep.',
  },
};

const CONTRIBUTION_LABEL: Record<Contribution, string> = {
  positive: 'Helping',
  neutral: 'Normal range',
  attention: 'Pulling it down',
};

type Range = '7' | '30' | '90';

function scoreNote(s: DailyScore): string {
  if (s.score_state === 'PENDING' && s.score === null) return 'No data yet: nothing is logged for today. The score starts with your first meal or a night’s sleep.';
  if (s.score_state === 'PENDING') return 'Provisional: today is not over, so the score can still change.';
  if (s.score_state === 'UNSCORABLE') return 'No meals were logged that day, so there is nothing to score.';
  return 'Scored from the finished day.';
}

/** The widest trend range: the screen loads it ahead, when idle, so that every switch only draws. */
const WIDEST_DAYS = 90;
/** How long after the screen's own data the widest range is loaded (not competing with that render). */
const PREFETCH_AFTER_MS = 2000;

export default function ScoreScreen() {
  const app = useApp();
  const [range, setRange] = useState<Range>('30');
  const days = Number(range);
  // The days loaded: the widest range asked for so far (or prefetched). Narrower ranges are slices
  // of it, so switching down never asks the service again and switching up asks at most once.
  const [loadedDays, setLoadedDays] = useState(days);
  const daily = useResource(
    (signal) =>
      listDailyScores({ start_date: addDays(app.today, -(loadedDays - 1)), end_date: app.today }, signal),
    [app.today, loadedDays],
  );
  const overnight = useResource(
    (signal) =>
      listOvernightScores({ start_date: addDays(app.today, -29), end_date: app.today }, signal),
    [app.today],
  );
  useServiceEvents(['gut_score.created', 'meal.', 'settings.updated'], daily.reload, 400);
  useServiceEvents(['overnight_score.created', 'settings.updated'], overnight.reload, 400);

  const haveData = daily.data !== undefined;
  useEffect(() => {
    if (!haveData || loadedDays >= WIDEST_DAYS) return;
    let idle: number | undefined;
    const timer = setTimeout(() => {
      idle = requestIdleCallback(() => setLoadedDays(WIDEST_DAYS));
    }, PREFETCH_AFTER_MS);
    return () => {
      clearTimeout(timer);
      if (idle !== undefined) cancelIdleCallback(idle);
    };
  }, [haveData, loadedDays]);

  function chooseRange(next: Range) {
    setRange(next);
    setLoadedDays((d) => Math.max(d, Number(next)));
  }

  const scores = useStableScores(daily.data?.data, addDays(app.today, -(days - 1)));
  // The day whose components are shown: today, following it across midnight, until the person
  // steps to another day (stepping back to today follows it again).
  const [steppedTo, setSteppedTo] = useState<string | null>(null);
  const chosenDay = steppedTo ?? app.today;
  const chooseDay = (day: string) => setSteppedTo(day === app.today ? null : day);
  const shown = scores.find((s) => s.date === chosenDay) ?? scores.find((s) => s.date === app.today) ?? scores[scores.length - 1];
  const nights = overnight.data?.data ?? [];
  const lastNight = [...nights].reverse().find((n) => n.score_state !== 'UNSCORABLE') ?? nights[nights.length - 1];

  return (
    <div className="screen" data-testid="score">
      <ScreenHead title="Gut score" subtitle="How your eating pattern supports digestion, from 0 to 100." />
      <ResourceStatus resource={daily} />
      {shown ? (
        <DayScore score={shown} isToday={shown.date === app.today} stepper={<DayStepper day={shown.date} onChange={chooseDay} min={scores[0]?.date} max={app.today} label="Day to show" />} />
      ) : daily.data ? (
        <Card>
          <Empty>No scores yet. Log a few meals to get one.</Empty>
        </Card>
      ) : null}

      <Card
        title="Trend"
        actions={
          <Segmented
            label="Trend range"
            hideLabel
            value={range}
            onChange={chooseRange}
            options={[
              { value: '7', label: '7 days' },
              { value: '30', label: '30 days' },
              { value: '90', label: '90 days' },
            ]}
          />
        }
      >
        {daily.data ? <TrendChart scores={scores} today={app.today} days={days} /> : <Loading />}
      </Card>

      <div className="score-grid">
        <Card title="Overnight">
          <ResourceStatus resource={overnight} />
          {lastNight ? <OvernightDetail night={lastNight} /> : overnight.data ? <Empty>No overnight score yet. Log a night’s sleep to get one.</Empty> : null}
          {nights.length > 1 ? <OvernightChart nights={nights} /> : null}
        </Card>
        <Card title="Log sleep">
          <SleepLog onSaved={overnight.reload} />
        </Card>
      </div>
    </div>
  );
}

const NO_SCORES: DailyScore[] = [];

/**
 * The loaded scores from `fromDate` on. The same array as last time while its content is the same
 * (a prefetch of a wider range, a live reload that changed nothing), so the chart is not redrawn.
 */
function useStableScores(loaded: DailyScore[] | undefined, fromDate: string): DailyScore[] {
  const last = useRef<DailyScore[]>(NO_SCORES);
  return useMemo(() => {
    const scores = loaded?.filter((s) => s.date >= fromDate) ?? NO_SCORES;
    const prev = last.current;
    // Comparing the content only when it can be the same (a range switch changes the length).
    const same = scores.length === prev.length && scores[0]?.date === prev[0]?.date && JSON.stringify(scores) === JSON.stringify(prev);
    if (!same) last.current = scores;
    return last.current;
  }, [loaded, fromDate]);
}

/** One day's score and its four components, with the stepper that picks the day. */
function DayScore({ score, isToday, stepper }: { score: DailyScore; isToday: boolean; stepper: ReactNode }) {
  // A day with nothing logged (finished: UNSCORABLE; today until its first meal or sleep: PENDING)
  // has no score, and its components describe no data: the service reports them as neutral, and
  // they read "No data" rather than a value.
  const noData = score.score === null;
  return (
    <Card className="card--score" title={isToday ? 'Today' : fmtDay(score.date, 'long')} actions={stepper}>
      <div className="score-hero">
        <div
          className={`score-hero__ring level--${score.level ?? 'none'}`}
          style={{ '--pct': score.score ?? 0 } as CSSProperties}
          data-testid="score-value"
        >
          <span className="score-hero__num">{score.score ?? '—'}</span>
          <span className="score-hero__level">{score.level ? capitalize(score.level) : score.score_state === 'UNSCORABLE' ? 'Unscorable' : 'No data'}</span>
        </div>
        <div className="score-hero__text">
          <p>
            <Chip tone={score.score_state.toLowerCase()}>{score.score_state}</Chip>
            {score.calibrating ? <Chip tone="calibrating">Calibrating</Chip> : null}
          </p>
          <p>{scoreNote(score)}</p>
          {typeof score.confidence === 'number' && !noData ? (
            <p className="muted small">Confidence {Math.round(score.confidence * 100)}%: digestion varies 20–40% from person to person and day to day.</p>
          ) : null}
          {score.calibrating ? (
            <p className="muted">Chyme is still learning your pattern: with less than two days of data, scores are less reliable.</p>
          ) : null}
        </div>
      </div>
      <ul className="components">
        {COMPONENT_NAMES.map((name) => {
          const c = score.components[name];
          const info = COMPONENT_INFO[name];
          return (
            <li key={name} className={`component component--${noData ? 'neutral' : (c?.contribution ?? 'none')}`} data-testid={`component-${name}`}>
              <div className="component__head">
                <h3>{info.title}</h3>
                <span>
                  {noData ? (
                    <Chip tone="neutral">No data</Chip>
                  ) : (
                    <>
                      {c && 'source' in c && c.source === 'estimated' ? <Chip tone="pending">Estimated</Chip> : null}
                      {c ? <Chip tone={c.contribution}>{CONTRIBUTION_LABEL[c.contribution]}</Chip> : null}
                    </>
                  )}
                </span>
              </div>
              <p className="component__value">
                <span className="component__num">{c && !noData ? fmtNumber(c.value) : '—'}</span>
                <span className="meter meter--wide" aria-hidden="true">
                  <span style={{ width: `${noData ? 0 : Math.max(0, Math.min(100, c?.value ?? 0))}%` }} />
                </span>
              </p>
              <p className="component__moves">{info.moves}</p>
            </li>
          );
        })}
      </ul>
    </Card>
  );
}

interface TrendPoint {
  date: string;
  label: string;
  scored: number | null;
  pending: number | null;
  state: DailyScore['score_state'];
  level: string | null;
}

interface TrendData {
  points: (TrendPoint & { bridge: number | null })[];
  drawable: boolean;
  unscorable: number;
  avg: number | null;
  floor: number;
  /** The x-axis labels that may be shown: every day up to two weeks, else about 15 spread back from today. */
  xTicks: string[];
}

function trendData(scores: DailyScore[], today: string): TrendData {
  const data: TrendPoint[] = scores.map((s) => ({
    date: s.date,
    label: s.date === today ? 'Today' : fmtDay(s.date),
    scored: s.score_state === 'SCORED' ? s.score : null,
    pending: s.score_state === 'PENDING' ? s.score : null,
    state: s.score_state,
    level: s.level,
  }));
  // The provisional point is joined to the last scored one with a dashed line.
  const lastScoredIdx = data.map((d) => d.scored !== null).lastIndexOf(true);
  const pendingIdx = data.findIndex((d) => d.pending !== null);
  const points = data.map((d, i) => ({
    ...d,
    bridge: pendingIdx < 0 ? null : i === pendingIdx ? d.pending : i === lastScoredIdx && lastScoredIdx < pendingIdx ? d.scored : null,
  }));
  const scored = data.filter((d) => d.scored !== null).map((d) => d.scored!);
  // Offering recharts a few candidates, not every day, spares it measuring 90 labels to thin them
  // (it still drops those that would overlap on a narrow chart).
  const step = Math.max(1, Math.ceil(data.length / 15));
  const xTicks = data.filter((_, i) => (data.length - 1 - i) % step === 0).map((d) => d.label);
  // The axis starts low enough to show every point and the fair band (60), in steps of 10.
  const values = data.flatMap((d) => (d.scored ?? d.pending) ?? []);
  return {
    points,
    drawable: data.some((d) => d.scored !== null || d.pending !== null),
    unscorable: data.filter((d) => d.state === 'UNSCORABLE').length,
    avg: scored.length ? Math.round(scored.reduce((a, b) => a + b, 0) / scored.length) : null,
    floor: Math.max(0, Math.min(50, Math.floor((Math.min(...values, 60) - 5) / 10) * 10)),
    xTicks,
  };
}

/**
 * Memoised: it redraws only when its scores change (the parent passes the same array while they
 * are the same), not when the range buttons, the day stepper or a reload re-render the screen.
 */
/**
 * Memoised: it redraws only when its scores change (the parent passes the same array while they
 * are the same), not when the range buttons, the day stepper or a reload re-render the screen.
 */
const TrendChart = memo(function TrendChart({ scores, today, days }: { scores: DailyScore[]; today: string; days: number }) {
  const trend = useMemo(() => trendData(scores, today), [scores, today]);
  if (!trend.drawable) return <Empty>No scored days in this range yet.</Empty>;
  const { unscorable, avg } = trend;
  return (
    <figure className="chart" data-testid="trend-chart" data-days={days} data-points={scores.length}>
      <TrendPlot trend={trend} days={days} />
      <figcaption className="chart__caption">
        {avg !== null ? <span>Average of scored days: <strong>{avg}</strong></span> : null}
        <span className="legend legend--scored">Scored</span>
        <span className="legend legend--pending">Provisional (today)</span>
        {unscorable ? <span className="muted">{unscorable} day{unscorable === 1 ? '' : 's'} without meals left out (unscorable)</span> : null}
      </figcaption>
    </figure>
  );
});

// recharts keeps its props in a store and recomputes the chart when one changes: constant objects
// keep a re-render from redoing the layout.
const TREND_MARGIN = { top: 10, right: 12, bottom: 0, left: 0 };
const TREND_DOT = { r: 3, className: 'trend-dot' };
const TREND_ACTIVE_DOT = { r: 5 };
const PENDING_DOT = { r: 5, className: 'trend-dot--pending' };
const PENDING_ACTIVE_DOT = { r: 6 };
const CURSOR = { className: 'chart-cursor' };
const TOOLTIP = <TrendTooltip />;
// The grid draws horizontal lines only; without this generator it would still lay out (and
// measure the labels of) every x-axis tick to place vertical lines it does not draw.
const NO_VERTICAL_LINES = () => [];

const TrendPlot = memo(function TrendPlot({ trend, days }: { trend: TrendData; days: number }) {
  const { points, floor, xTicks, avg, unscorable } = trend;
  const pending = points.find((p) => p.pending !== null)?.pending;
  // A picture with a name, not a focusable "application" (recharts' keyboard layer): each day's
  // score is reachable by keyboard through the day stepper above, and the caption says the rest.
  const summary = [
    avg !== null ? `Average of scored days: ${avg}.` : 'No scored days.',
    pending != null ? `Today so far: ${pending} (provisional).` : '',
    unscorable ? `${unscorable} day${unscorable === 1 ? '' : 's'} without meals left out.` : '',
  ].filter(Boolean).join(' ');
  return (
    <div className="chart__box" style={{ height: 240 }}>
      <ResponsiveContainer width="100%" height="100%">
        {/* No negative left margin: it would clip the axis labels ("100" showed as ".00"). */}
        <ComposedChart data={points} margin={TREND_MARGIN} accessibilityLayer={false} role="img" title={`Gut score, the last ${days} days`} desc={summary}>
          <defs>
            <linearGradient id="trendFill" x1="0" y1="0" x2="0" y2="1">
              <stop offset="0%" className="stop-accent" stopOpacity={0.35} />
              <stop offset="100%" className="stop-accent" stopOpacity={0} />
            </linearGradient>
          </defs>
          <ReferenceArea y1={85} y2={100} className="band band--optimal" ifOverflow="hidden" />
          <ReferenceArea y1={70} y2={85} className="band band--good" ifOverflow="hidden" />
          <ReferenceArea y1={60} y2={70} className="band band--fair" ifOverflow="hidden" />
          <CartesianGrid vertical={false} verticalCoordinatesGenerator={NO_VERTICAL_LINES} className="grid-lines" />
          <XAxis dataKey="label" ticks={xTicks} tickLine={false} axisLine={false} minTickGap={24} className="axis" />
          <YAxis domain={[floor, 100]} ticks={[floor, 60, 70, 85, 100]} allowDataOverflow tickLine={false} axisLine={false} width={34} className="axis" />
          {/* filterNull off: a day without a score (unscorable) still gets its tooltip, saying so. */}
          <Tooltip content={TOOLTIP} cursor={CURSOR} filterNull={false} />
          <Area type="monotone" dataKey="scored" className="trend-area" fill="url(#trendFill)" connectNulls={false} isAnimationActive={false} dot={points.length <= 31 ? TREND_DOT : false} activeDot={TREND_ACTIVE_DOT} />
          <Line type="monotone" dataKey="bridge" className="trend-bridge" connectNulls dot={false} activeDot={false} isAnimationActive={false} legendType="none" />
          <Line type="monotone" dataKey="pending" className="trend-pending" dot={PENDING_DOT} activeDot={PENDING_ACTIVE_DOT} isAnimationActive={false} />
        </ComposedChart>
      </ResponsiveContainer>
    </div>
  );
});

function TrendTooltip(props: { active?: boolean; payload?: readonly { payload: TrendPoint }[] }) {
  const p = props.active ? props.payload?.[0]?.payload : undefined;
  if (!p) return null;
  const value = p.scored ?? p.pending;
  return (
    <div className="chart-tip">
      <strong>{fmtDay(p.date, 'long')}</strong>
      <span>{value !== null ? `${value} · ${p.level ? capitalize(p.level) : ''}` : 'Unscorable'}</span>
      {p.state === 'PENDING' ? <span className="muted">Provisional</span> : null}
    </div>
  );
}

const FEATURE_LABEL: Record<string, string> = {
  last_meal_gap_min: 'Last meal to sleep',
  late_calories: 'Late calories',
  late_caffeine_mg: 'Late caffeine',
  sleep_duration_min: 'Sleep duration',
  sleep_efficiency: 'Sleep efficiency',
  efficiency: 'Sleep efficiency',
  awakenings: 'Awakenings',
};

function featureValue(name: string, v: number | null): string {
  if (v === null || v === undefined) return '—';
  if (name.endsWith('_min')) return fmtDuration(v);
  if (name.endsWith('_mg')) return `${fmtNumber(v)} mg`;
  if (name.includes('calories')) return `${fmtNumber(v)} kcal`;
  if (name.includes('efficiency')) return v <= 1 ? `${Math.round(v * 100)}%` : `${fmtNumber(v)}%`;
  return fmtNumber(v, 2);
}

/** The service looks back 24 h for the last meal before sleep: none there is what the gap's value says. */
const NO_MEAL_BEFORE = 'None in the 24 h before';

function OvernightDetail({ night }: { night: OvernightScore }) {
  const app = useApp();
  const dev = night.deviation;
  return (
    <div className="overnight" data-testid="overnight">
      <div className="overnight__head">
        <ScoreGlance
          score={night.score ?? '—'}
          level={night.level}
          label={night.level ? capitalize(night.level) : capitalize(night.score_state.toLowerCase())}
          detail={`Night ending ${dayLabel(night.date, app.today)}`}
        />
        <dl className="facts facts--tight">
          <div>
            <dt>Baseline</dt>
            <dd>
              {night.baseline?.score ?? '—'} <span className="muted small">({night.baseline?.days ?? 0} nights)</span>
            </dd>
          </div>
          <div>
            <dt>Deviation</dt>
            <dd className={dev === null ? '' : dev >= 0 ? 'up' : 'down'}>{dev === null ? '—' : `${dev > 0 ? '+' : dev < 0 ? '−' : ''}${Math.abs(dev)}`}</dd>
          </div>
          <div>
            <dt>Sleep</dt>
            <dd>
              {fmtTime(night.sleep.start, app.tz)}–{fmtTime(night.sleep.end, app.tz)}
            </dd>
          </div>
          <div>
            <dt>Last meal</dt>
            <dd>{night.last_meal_at ? fmtDateTime(night.last_meal_at, app.tz) : NO_MEAL_BEFORE}</dd>
          </div>
        </dl>
      </div>
      <table className="features">
        <caption className="visually-hidden">Overnight features</caption>
        <thead>
          <tr>
            <th scope="col">Feature</th>
            <th scope="col">Value</th>
            <th scope="col">Effect</th>
          </tr>
        </thead>
        <tbody>
          {Object.entries(night.features ?? {}).map(([name, f]) => (
            <tr key={name}>
              <th scope="row">{FEATURE_LABEL[name] ?? capitalize(name)}</th>
              <td>{name === 'last_meal_gap_min' && !night.last_meal_at ? NO_MEAL_BEFORE : featureValue(name, f.value)}</td>
              <td>
                <Chip tone={f.contribution}>{CONTRIBUTION_LABEL[f.contribution] ?? f.contribution}</Chip>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** Memoised like the trend: the nights change only when their request answers again. */
const OvernightChart = memo(function OvernightChart({ nights }: { nights: OvernightScore[] }) {
  const data = useMemo(() => nights.map((n) => ({ label: fmtDay(n.date), score: n.score, baseline: n.baseline?.score ?? null })), [nights]);
  return (
    <figure className="chart chart--small">
      <div className="chart__box" style={{ height: 140 }}>
        <ResponsiveContainer width="100%" height="100%">
          <BarChart data={data} margin={{ top: 8, right: 8, bottom: 0, left: -24 }} accessibilityLayer={false} role="img" title="Overnight scores, the last 30 nights">
            <CartesianGrid vertical={false} className="grid-lines" />
            <XAxis dataKey="label" tickLine={false} axisLine={false} minTickGap={20} className="axis" />
            <YAxis domain={[0, 100]} ticks={[0, 50, 100]} tickLine={false} axisLine={false} className="axis" />
            <Tooltip cursor={{ className: 'chart-cursor' }} contentStyle={{}} wrapperClassName="chart-tip-wrap" />
            <Bar dataKey="score" name="Overnight score" className="overnight-bar" radius={[3, 3, 0, 0]} isAnimationActive={false} />
          </BarChart>
        </ResponsiveContainer>
      </div>
      <figcaption className="chart__caption">Overnight scores, last 30 nights</figcaption>
    </figure>
  );
});

function SleepLog({ onSaved }: { onSaved: () => void }) {
  const app = useApp();
  const defaults = () => ({
    start: toLocalInput(localTimeToInstant(addDays(app.today, -1), 23 * 60, app.tz), app.tz),
    end: toLocalInput(localTimeToInstant(app.today, 7 * 60, app.tz), app.tz),
    efficiency: '',
    awakenings: '',
  });
  const [form, setFormState] = useState(defaults);
  // Last night's times follow the day (a screen left open across midnight offers the new night)
  // until the person types a time of their own.
  const [touched, setTouched] = useState(false);
  const setForm = (next: typeof form) => {
    setTouched(true);
    setFormState(next);
  };
  useEffect(() => {
    if (!touched) setFormState(defaults());
  }, [app.today, app.tz]);
  const { errors, setErrors, busy, send } = useApiForm((p) => ['start', 'end', 'efficiency', 'awakenings'].includes(p));
  const sessions = useResource(
    (signal) => listSleep({ start_date: addDays(app.today, -13), end_date: app.today }, signal),
    [app.today],
  );

  async function submit(e: FormEvent) {
    e.preventDefault();
    const start = fromLocalInput(form.start, app.tz);
    const end = fromLocalInput(form.end, app.tz);
    const errs: FieldErrors = {};
    if (Number.isNaN(start)) errs.start = 'Enter when you fell asleep.';
    if (Number.isNaN(end)) errs.end = 'Enter when you woke up.';
    const body: SleepInput = { start: Number.isNaN(start) ? '' : iso(start), end: Number.isNaN(end) ? '' : iso(end), source: 'manual' };
    if (form.efficiency.trim()) {
      const pct = Number(form.efficiency.replace('%', '').trim());
      if (!Number.isFinite(pct)) errs.efficiency = 'Enter a percentage.';
      else body.efficiency = pct / 100;
    }
    if (form.awakenings.trim()) {
      const n = Number(form.awakenings);
      if (!Number.isInteger(n)) errs.awakenings = 'Enter a whole number.';
      else body.awakenings = n;
    }
    if (Object.keys(errs).length) return setErrors(errs);
    await send(async () => {
      try {
        await createSleep(body, idempotencyKey());
      } catch (err) {
        throw await explainOverlap(err, start, end);
      }
      setFormState(defaults());
      setTouched(false);
      sessions.reload();
      onSaved();
      app.toast('Sleep logged. The overnight score updates in a moment.');
    });
  }

  /**
   * The service's overlap error names the other session in UTC, for API clients; the person gets
   * it in their own zone. The other session is looked up among those that can overlap.
   */
  async function explainOverlap(err: unknown, startMs: number, endMs: number): Promise<unknown> {
    if (!(err instanceof ApiError) || err.code !== 'sleep_overlap') return err;
    const other = await listSleep(overlapSearchDays(startMs, endMs, app.tz, app.dayStart))
      .then((page) => findOverlap(page.data, startMs, endMs))
      .catch(() => undefined);
    return new ApiError(err.status, { type: 'invalid_request_error', code: err.code, param: err.param, message: overlapMessage(other, app.tz), request_id: err.requestId });
  }

  async function remove(s: SleepSession) {
    try {
      await deleteSleep(s.id);
      sessions.reload();
      onSaved();
      app.toast('Sleep session deleted.');
    } catch (err) {
      app.toast(errorMessage(err), { tone: 'error' });
    }
  }

  return (
    <>
      <form className="sleep-form" onSubmit={submit} noValidate aria-label="Log sleep">
        <FormError errors={errors} />
        <div className="grid grid--2">
          <Field label="Fell asleep" error={errors.start}>
            {({ id, describedBy, invalid }) => (
              <input id={id} type="datetime-local" value={form.start} onChange={(e) => setForm({ ...form, start: e.target.value })} aria-describedby={describedBy} aria-invalid={invalid} />
            )}
          </Field>
          <Field label="Woke up" error={errors.end}>
            {({ id, describedBy, invalid }) => (
              <input id={id} type="datetime-local" value={form.end} onChange={(e) => setForm({ ...form, end: e.target.value })} aria-describedby={describedBy} aria-invalid={invalid} />
            )}
          </Field>
          <Field label="Efficiency (%)" error={errors.efficiency} hint="Optional, from a tracker.">
            {({ id, describedBy, invalid }) => (
              <input id={id} type="text" inputMode="decimal" value={form.efficiency} onChange={(e) => setForm({ ...form, efficiency: e.target.value })} aria-describedby={describedBy} aria-invalid={invalid} autoComplete="off" />
            )}
          </Field>
          <Field label="Awakenings" error={errors.awakenings} hint="Optional.">
            {({ id, describedBy, invalid }) => (
              <input id={id} type="text" inputMode="numeric" value={form.awakenings} onChange={(e) => setForm({ ...form, awakenings: e.target.value })} aria-describedby={describedBy} aria-invalid={invalid} autoComplete="off" />
            )}
          </Field>
        </div>
        <div className="form-actions">
          <button type="submit" className="btn btn--primary" disabled={busy}>
            <Icon name="moon" size={16} /> Log sleep
          </button>
        </div>
      </form>
      {sessions.data?.data.length ? (
        <ul className="sleep-list" aria-label="Recent sleep">
          {sessions.data.data.slice(0, 7).map((s) => (
            <li key={s.id}>
              <span>
                {fmtDateTime(s.start, app.tz)} → {fmtTime(s.end, app.tz)}
              </span>
              <span className="muted">{fmtDuration((Date.parse(s.end) - Date.parse(s.start)) / 60000)}</span>
              <button type="button" className="icon-btn icon-btn--danger" onClick={() => void remove(s)} aria-label={`Delete sleep from ${fmtDateTime(s.start, app.tz)}`}>
                <Icon name="trash" />
              </button>
            </li>
          ))}
        </ul>
      ) : null}
    </>
  );
}
