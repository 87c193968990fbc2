import { useLayoutEffect, useRef, useState, type RefObject } from 'react';
import { listTimeline } from '../api/digestion';
import { listMeals } from '../api/meals';
import type { Meal, TimelineEntry } from '../api/types';
import { DayStepper } from '../components/DayStepper';
import { Card, ResourceStatus, ScreenHead, Segmented } from '../components/ui';
import { useApp } from '../lib/app';
import { useNow, useResource, useServiceEvents } from '../lib/hooks';
import { capitalize, mealTitle } from '../lib/meals';
import { addDays, clock, dayBounds, dayLabel, dayOf, fmtDay, fmtDuration, fmtTime, livedOffsetNote, livedShiftMs, localParts, minutesOf } from '../lib/time';
import './Timeline.css';

type View = 'day' | 'week';

/**
 * One meal's phases as instants, drawn on the clock where it was eaten: a meal eaten at another
 * offset than the zone's is moved by the difference, so it sits on its own `day`'s row at the time
 * it was lived (docs/api.md, "A meal's day: one rule"), as Today and Meals list it.
 */
interface Bar {
  id: string;
  /** The meal's day (the API's), which picks its row. */
  day: string;
  mealTime: number;
  fedEnd: number;
  processingEnd: number;
  settlingEnd: number;
  /** " (UTC+1)" when drawn on another clock than the zone's. */
  offsetNote: string;
  entry: TimelineEntry;
  meal: Meal | undefined;
}

function toBars(entries: readonly TimelineEntry[], meals: readonly Meal[], tz: string, dayStartMin: number): Bar[] {
  const byId = new Map(meals.map((m) => [m.id, m]));
  return entries
    .map((e) => {
      const meal = byId.get(e.meal_id);
      const t = Date.parse(e.meal_time) + (meal ? livedShiftMs(meal, tz) : 0);
      return {
        id: e.meal_id,
        day: meal?.day ?? dayOf(t, tz, dayStartMin),
        mealTime: t,
        fedEnd: t + e.phases.fed_end_min * 60000,
        processingEnd: t + e.phases.processing_end_min * 60000,
        settlingEnd: t + e.phases.settling_end_min * 60000,
        offsetNote: meal ? livedOffsetNote(meal, tz) : '',
        entry: e,
        meal,
      };
    })
    .sort((a, b) => a.mealTime - b.mealTime);
}

/** The bars a day's row shows: its own meals, and earlier days' meals still digesting into it. */
function barsOfDay(bars: readonly Bar[], day: string, start: number, end: number): Bar[] {
  return bars.filter((b) => b.day === day || (b.day < day && b.settlingEnd > start && b.mealTime < end));
}

/**
 * Greedy lanes: a bar goes in the first lane free by its start, so overlapping meals stack. Meals
 * carried over from before the row's start are drawn clipped at the start, identical there, so they
 * share the first lane.
 */
function assignLanes(bars: readonly Bar[], rowStart: number): number[] {
  const spillEnd = Math.max(-Infinity, ...bars.filter((b) => b.mealTime < rowStart).map((b) => b.settlingEnd));
  const laneEnds: number[] = spillEnd > -Infinity ? [spillEnd] : [];
  return bars.map((b) => {
    if (b.mealTime < rowStart) return 0;
    let lane = laneEnds.findIndex((end) => end <= b.mealTime);
    if (lane < 0) lane = laneEnds.push(0) - 1;
    laneEnds[lane] = b.settlingEnd;
    return lane;
  });
}

/** Spans where two or more meals are digesting at once. */
function overlaps(bars: readonly Bar[]): [number, number][] {
  const points = bars.flatMap((b) => [
    [b.mealTime, 1],
    [b.settlingEnd, -1],
  ] as [number, number][]);
  points.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const out: [number, number][] = [];
  let depth = 0;
  let from = 0;
  for (const [t, d] of points) {
    const before = depth;
    depth += d;
    if (before < 2 && depth >= 2) from = t;
    if (before >= 2 && depth < 2 && t > from) out.push([from, t]);
  }
  return out;
}

function useWidth<T extends HTMLElement>(): [RefObject<T | null>, number] {
  const ref = useRef<T>(null);
  const [width, setWidth] = useState(800);
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    setWidth(el.clientWidth);
    const ro = new ResizeObserver(([entry]) => entry && setWidth(entry.contentRect.width));
    ro.observe(el);
    return () => ro.disconnect();
  }, []);
  return [ref, width];
}

export default function TimelineScreen({ params }: { params: URLSearchParams }) {
  const app = useApp();
  const day = /^\d{4}-\d{2}-\d{2}$/.test(params.get('day') ?? '') ? params.get('day')! : app.today;
  const view: View = params.get('view') === 'week' ? 'week' : 'day';
  const go = (p: { day?: string; view?: View }) => app.navigate('timeline', { day: p.day ?? day, view: p.view ?? view });

  const first = view === 'day' ? addDays(day, -1) : addDays(day, -7);
  const data = useResource(
    async (signal) => {
      const [entries, meals] = await Promise.all([
        listTimeline({ start_date: first, end_date: day }, signal),
        listMeals({ start_date: first, end_date: day }, signal),
      ]);
      return toBars(entries, meals, app.tz, minutesOf(app.dayStart));
    },
    [first, day, app.tz, app.dayStart],
  );
  useServiceEvents(['meal.', 'settings.updated'], data.reload, 300);
  const now = useNow(30_000);

  return (
    <div className="screen" data-testid="timeline">
      <ScreenHead title="Timeline" subtitle="Each meal’s way through: fed, processing, settling.">
        <div className="toolbar">
          <Segmented
            label="View"
            hideLabel
            value={view}
            onChange={(v) => go({ view: v })}
            options={[
              { value: 'day', label: 'Day' },
              { value: 'week', label: 'Week' },
            ]}
          />
          <DayStepper day={day} onChange={(d) => go({ day: d })} step={view === 'day' ? 1 : 7} unit={view} label={view === 'day' ? 'Day' : 'Week ending'} />
        </div>
      </ScreenHead>
      <Card title={view === 'day' ? fmtDay(day, 'long') : `${fmtDay(addDays(day, -6))} – ${fmtDay(day)}`}>
        <Legend />
        <ResourceStatus resource={data} />
        {data.data ? view === 'day' ? <DayChart day={day} bars={data.data} now={Math.max(now, clock.now())} /> : <WeekChart lastDay={day} bars={data.data} now={Math.max(now, clock.now())} /> : null}
      </Card>
    </div>
  );
}

function Legend() {
  return (
    <ul className="phase-legend" aria-label="Phases">
      <li>
        <span className="swatch swatch--fed" aria-hidden="true" />
        Fed: stomach emptying the first half
      </li>
      <li>
        <span className="swatch swatch--processing" aria-hidden="true" />
        Processing: until 90% has left the stomach
      </li>
      <li>
        <span className="swatch swatch--settling" aria-hidden="true" />
        Settling: until the fasting pattern returns
      </li>
      <li>
        <span className="swatch swatch--overlap" aria-hidden="true" />
        Overlap
      </li>
    </ul>
  );
}

const PAD_R = 16;
/** Below this chart width (a phone), the row labels get a narrower column and shorter titles. */
const NARROW = 480;

/**
 * The row labels' column and the plot beside it, both within `width`: on a phone-width window
 * (~290 px of chart) a fixed 150 px label column and a 200 px minimum plot spilled out of the card.
 */
function chartLayout(width: number): { labelW: number; plotW: number; titleChars: number } {
  const narrow = width < NARROW;
  const labelW = narrow ? 122 : 150;
  return { labelW, plotW: Math.max(80, width - labelW - PAD_R), titleChars: narrow ? 15 : 20 };
}

function axisTicks(start: number, end: number, tz: string, everyH: number): { t: number; label: string }[] {
  const out: { t: number; label: string }[] = [];
  // Ticks at whole local hours.
  const p = localParts(start, tz);
  let t = start + ((60 - p.minute) % 60) * 60000 - p.second * 1000;
  for (; t <= end; t += 3600000) {
    const h = localParts(t, tz).hour;
    if (h % everyH === 0) out.push({ t, label: fmtTime(t, tz) });
  }
  return out;
}

function PhaseBar({ b, x, y, h, clipStart, clipEnd }: { b: Bar; x: (t: number) => number; y: number; h: number; clipStart: number; clipEnd: number }) {
  const seg = (from: number, to: number, cls: string) => {
    const a = Math.max(from, clipStart);
    const z = Math.min(to, clipEnd);
    if (z <= a) return null;
    return <rect className={`phase phase--${cls}`} x={x(a)} y={y} width={Math.max(1, x(z) - x(a))} height={h} rx={Math.min(4, h / 2)} />;
  };
  return (
    <g>
      {seg(b.processingEnd, b.settlingEnd, 'settling')}
      {seg(b.fedEnd, b.processingEnd, 'processing')}
      {seg(b.mealTime, b.fedEnd, 'fed')}
      {b.mealTime >= clipStart && b.mealTime <= clipEnd ? <circle className="phase-start" cx={x(b.mealTime)} cy={y + h / 2} r={Math.min(5, h / 2 + 1)} /> : null}
    </g>
  );
}

function DayChart({ day, bars: allBars, now }: { day: string; bars: Bar[]; now: number }) {
  const app = useApp();
  const [ref, width] = useWidth<HTMLDivElement>();
  const { start, end } = dayBounds(day, app.tz, minutesOf(app.dayStart));
  const bars = barsOfDay(allBars, day, start, end);
  const rowH = 34;
  const top = 28;
  const height = top + Math.max(1, bars.length) * rowH + 30;
  const { labelW, plotW, titleChars } = chartLayout(width);
  const x = (t: number) => labelW + ((t - start) / (end - start)) * plotW;
  const ticks = axisTicks(start, end, app.tz, width < 640 ? 6 : 3);
  const lapped = overlaps(bars);
  const dayStartMin = minutesOf(app.dayStart);
  /** A time, with its day when that is not the day shown ("1:05 · Tomorrow"). */
  const at = (ms: number) => {
    const d = dayOf(ms, app.tz, dayStartMin);
    return d === day ? fmtTime(ms, app.tz) : `${dayLabel(d, app.today)} ${fmtTime(ms, app.tz)}`;
  };

  const summary = bars.length
    ? `${bars.length} meal${bars.length === 1 ? '' : 's'} on ${fmtDay(day, 'long')}${lapped.length ? `, overlapping ${lapped.length} time${lapped.length === 1 ? '' : 's'}` : ''}.`
    : `No meals on ${fmtDay(day, 'long')}.`;

  return (
    <>
      <div className="timeline" ref={ref} data-testid="timeline-day" data-day={day}>
        <svg width={width} height={height} role="img" aria-label={summary}>
          {ticks.map((tk) => (
            <g key={tk.t} className="tick">
              <line x1={x(tk.t)} x2={x(tk.t)} y1={top - 6} y2={height - 26} />
              <text x={x(tk.t)} y={height - 8} textAnchor="middle">
                {tk.label}
              </text>
            </g>
          ))}
          {lapped.map(([a, z]) => (
            <rect key={a} className="overlap-band" x={x(Math.max(a, start))} y={top - 6} width={Math.max(2, x(Math.min(z, end)) - x(Math.max(a, start)))} height={height - top - 20} />
          ))}
          {bars.map((b, i) => {
            const y = top + i * rowH;
            const spill = b.mealTime < start;
            return (
              <g key={b.id} className={`timeline-row ${spill ? 'is-spill' : ''}`} data-testid="timeline-bar" data-meal-id={b.id}>
                <text className="row-label" x={8} y={y + rowH / 2 - 2}>
                  <tspan className="row-label__time">{at(b.mealTime) + b.offsetNote}</tspan>
                  <tspan x={8} dy={13} className="row-label__title">
                    {truncate(b.meal ? mealTitle(b.meal) : capitalize(b.entry.meal_type), titleChars)}
                  </tspan>
                </text>
                <PhaseBar b={b} x={x} y={y + 7} h={rowH - 16} clipStart={start} clipEnd={end} />
              </g>
            );
          })}
          {!bars.length ? (
            <text x={labelW + plotW / 2} y={top + rowH / 2} textAnchor="middle" className="empty-label">
              No meals this day
            </text>
          ) : null}
          {now >= start && now <= end ? (
            <g className="now-mark" data-testid="now-marker">
              <line x1={x(now)} x2={x(now)} y1={top - 12} y2={height - 26} />
              <text x={x(now)} y={top - 14} textAnchor="middle">
                now
              </text>
            </g>
          ) : null}
        </svg>
      </div>
      {bars.length ? (
        <table className="phase-table table--stack">
          <caption>Phases by meal</caption>
          <thead>
            <tr>
              <th scope="col">Meal</th>
              <th scope="col">Fed until</th>
              <th scope="col">Processing until</th>
              <th scope="col">Settled at</th>
              <th scope="col">Total</th>
              <th scope="col">Confidence</th>
            </tr>
          </thead>
          <tbody>
            {bars.map((b) => (
              <tr key={b.id}>
                <th scope="row">
                  {at(b.mealTime) + b.offsetNote} · {b.meal ? mealTitle(b.meal) : capitalize(b.entry.meal_type)}
                </th>
                <td data-label="Fed until">{at(b.fedEnd)}</td>
                <td data-label="Processing until">{at(b.processingEnd)}</td>
                <td data-label="Settled at">{at(b.settlingEnd)}</td>
                <td data-label="Total">{fmtDuration(b.entry.total_processing_min)}</td>
                <td data-label="Confidence">{Math.round(b.entry.confidence * 100)}%</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </>
  );
}

function WeekChart({ lastDay, bars, now }: { lastDay: string; bars: Bar[]; now: number }) {
  const app = useApp();
  const [ref, width] = useWidth<HTMLDivElement>();
  const days = Array.from({ length: 7 }, (_, i) => addDays(lastDay, i - 6));
  const dayStartMin = minutesOf(app.dayStart);
  const rows = days.map((d) => {
    const { start, end } = dayBounds(d, app.tz, dayStartMin);
    const list = barsOfDay(bars, d, start, end);
    return { day: d, start, end, list, lanes: assignLanes(list, start) };
  });
  const laneH = 11;
  const gap = 14;
  const top = 10;
  const rowHeights = rows.map((r) => Math.max(1, ...r.lanes.map((l) => l + 1)) * laneH + 8);
  const height = top + rowHeights.reduce((a, b) => a + b + gap, 0) + 20;
  const { labelW, plotW } = chartLayout(width);
  const ref0 = rows[0]!;
  const span = ref0.end - ref0.start;
  // Every row uses the first day's axis shifted to its own start (days are 24 h except at DST).
  const xFor = (rowStart: number) => (t: number) => labelW + ((t - rowStart) / span) * plotW;
  const ticks = axisTicks(ref0.start, ref0.end, app.tz, width < 640 ? 6 : 3);
  let y = top;

  return (
    <div className="timeline" ref={ref} data-testid="timeline-week">
      <svg width={width} height={height} role="img" aria-label={`Meals from ${fmtDay(days[0]!, 'long')} to ${fmtDay(lastDay, 'long')}: ${bars.length} meals.`}>
        {ticks.map((tk) => {
          const x = xFor(ref0.start)(tk.t);
          return (
            <g key={tk.t} className="tick">
              <line x1={x} x2={x} y1={top} y2={height - 26} />
              <text x={x} y={height - 8} textAnchor="middle">
                {tk.label}
              </text>
            </g>
          );
        })}
        {rows.map((r, i) => {
          const rowY = y;
          const h = rowHeights[i]!;
          y += h + gap;
          const x = xFor(r.start);
          return (
            <g key={r.day} className={`week-row ${r.day === app.today ? 'is-today' : ''}`}>
              <rect className="week-row__bg" x={labelW - 4} y={rowY - 4} width={plotW + 8} height={h} rx={6} />
              <text className="row-label" x={8} y={rowY + h / 2}>
                {dayLabel(r.day, app.today)}
              </text>
              {overlaps(r.list).map(([a, z]) => (
                <rect key={a} className="overlap-band" x={x(Math.max(a, r.start))} y={rowY - 4} width={Math.max(2, x(Math.min(z, r.end)) - x(Math.max(a, r.start)))} height={h} />
              ))}
              {r.list.map((b, j) => (
                <g key={b.id} data-testid="timeline-week-bar" data-meal-id={b.id} data-day={r.day}>
                  <PhaseBar b={b} x={x} y={rowY + r.lanes[j]! * laneH} h={laneH - 3} clipStart={r.start} clipEnd={r.end} />
                </g>
              ))}
              {now >= r.start && now <= r.end ? (
                <line className="now-mark now-mark--week" x1={x(now)} x2={x(now)} y1={rowY - 6} y2={rowY + h + 2} data-testid="now-marker" />
              ) : null}
            </g>
          );
        })}
      </svg>
    </div>
  );
}

function truncate(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}
