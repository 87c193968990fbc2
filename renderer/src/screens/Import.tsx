/**
 * The Import screen: other apps' exports in. Files go to `POST /v1/imports` twice: first as a dry
 * run (the preview: what would be added, nothing written), then for real once the person confirms.
 * Past imports are listed with an Undo each.
 */
import { useCallback, useEffect, useMemo, useRef, useState, type DragEvent, type RefObject } from 'react';
import { ApiError, errorMessage } from '../api/client';
import { createImport, listImports, undoImport } from '../api/imports';
import type { Import } from '../api/types';
import { ConfirmButton } from '../components/ConfirmButton';
import { Chip, Empty, ErrorNote, Field, Icon, Loading, ScreenHead, TimeZoneOptions } from '../components/ui';
import { useApp } from '../lib/app';
import { capitalize, fmtNumber } from '../lib/meals';
import { fmtDateTime, fmtDay, fmtDuration, fmtTime, timeZoneNames } from '../lib/time';
import './Import.css';

const SOURCES = [
  { value: 'apple_health', label: 'Apple Health' },
  { value: 'cronometer', label: 'Cronometer' },
  { value: 'myfitnesspal', label: 'MyFitnessPal' },
  { value: 'oura', label: 'Oura' },
  { value: 'fitbit', label: 'Fitbit' },
  { value: 'chyme', label: 'Chyme (its own export)' },
] as const;

function sourceName(source: string): string {
  if (source === 'mixed') return 'several apps';
  if (source === 'chyme') return 'a Chyme export';
  return SOURCES.find((s) => s.value === source)?.label ?? source;
}

const plural = (n: number, one: string, many = `${one}s`) => `${fmtNumber(n)} ${n === 1 ? one : many}`;

function fmtBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 ** 2) return `${fmtNumber(n / 1024, 0)} KB`;
  if (n < 1024 ** 3) return `${fmtNumber(n / 1024 ** 2, 1)} MB`;
  return `${fmtNumber(n / 1024 ** 3, 2)} GB`;
}

/** "Sun 4 Mar 2018", "Mon 1 Jun – Tue 2 Jun 2026", "Mon 29 Dec 2025 – Fri 2 Jan 2026" (imports span years). */
function dayRange(i: Pick<Import, 'first_day' | 'last_day'>): string | null {
  const { first_day: first, last_day: last } = i;
  if (!first || !last) return null;
  const year = (d: string) => d.slice(0, 4);
  if (first === last) return `${fmtDay(first)} ${year(first)}`;
  if (year(first) === year(last)) return `${fmtDay(first)} – ${fmtDay(last)} ${year(last)}`;
  return `${fmtDay(first)} ${year(first)} – ${fmtDay(last)} ${year(last)}`;
}

/** "12 meals and 3 nights", "1 meal", "nothing": the counts that are not zero. */
function countsText(meals: number, nights: number): string {
  return [meals ? plural(meals, 'meal') : null, nights ? plural(nights, 'night') : null].filter(Boolean).join(' and ') || 'nothing';
}

/** A meal's time as it was lived: its instant at the UTC offset it was eaten at. */
function livedTime(timestamp: string, offsetMin: number): string {
  return fmtDateTime(Date.parse(timestamp) + offsetMin * 60_000, 'UTC');
}

type Purpose = 'preview' | 'import';

type Stage =
  | { kind: 'idle' }
  | { kind: 'working'; purpose: Purpose; sent: number; total: number; processing: boolean; preview: Import | null }
  | { kind: 'preview'; preview: Import }
  | { kind: 'done'; result: Import }
  | { kind: 'failed'; purpose: Purpose; error: unknown; preview: Import | null };

export default function ImportScreen() {
  const app = useApp();
  const [files, setFiles] = useState<File[]>([]);
  const [source, setSource] = useState('');
  /** A zone the person picked for times without one; unset, the service decides (settings, or Fitbit's profile). */
  const [zone, setZone] = useState<string | undefined>(undefined);
  const [stage, setStage] = useState<Stage>({ kind: 'idle' });
  const [dragging, setDragging] = useState(false);
  const inputRef = useRef<HTMLInputElement>(null);
  const chooseRef = useRef<HTMLButtonElement>(null);
  const headingRef = useRef<HTMLHeadingElement>(null);
  const uploadRef = useRef<AbortController | null>(null);
  const history = useImportHistory();

  // Cancel an upload still running when the screen is left.
  useEffect(() => () => uploadRef.current?.abort(), []);

  // A new outcome's heading takes focus, so keyboard and screen-reader users land on it; a preview
  // made again (another zone or app) leaves focus on the control that asked for it.
  const focusOutcome = useRef(false);
  const outcome = stage.kind === 'preview' || stage.kind === 'done' ? stage : null;
  useEffect(() => {
    if (!outcome || !focusOutcome.current) return;
    focusOutcome.current = false;
    headingRef.current?.focus();
  }, [outcome]);

  const run = useCallback(
    async (purpose: Purpose, options: { files: File[]; source: string; zone: string | undefined }, preview: Import | null) => {
      uploadRef.current?.abort();
      const ctrl = new AbortController();
      uploadRef.current = ctrl;
      focusOutcome.current = purpose === 'import' || preview === null;
      const total = options.files.reduce((n, f) => n + f.size, 0);
      setStage({ kind: 'working', purpose, sent: 0, total, processing: false, preview });
      const update = (change: Partial<Extract<Stage, { kind: 'working' }>>) => setStage((s) => (s.kind === 'working' && uploadRef.current === ctrl ? { ...s, ...change } : s));
      try {
        const result = await createImport(
          { files: options.files, source: options.source || undefined, timezone: options.zone, dryRun: purpose === 'preview' },
          { signal: ctrl.signal, onProgress: (sent, size) => update({ sent, total: size }), onSent: () => update({ processing: true }) },
        );
        if (ctrl.signal.aborted) return;
        if (purpose === 'preview') setStage({ kind: 'preview', preview: result });
        else {
          setStage({ kind: 'done', result });
          history.reload();
        }
      } catch (err) {
        if (ctrl.signal.aborted) return;
        setStage({ kind: 'failed', purpose, error: err, preview });
      } finally {
        if (uploadRef.current === ctrl) uploadRef.current = null;
      }
    },
    [history.reload],
  );

  function pick(list: File[]) {
    if (list.length === 0) return;
    setFiles(list);
    setZone(undefined);
    void run('preview', { files: list, source, zone: undefined }, null);
  }

  function reset() {
    uploadRef.current?.abort();
    uploadRef.current = null;
    setFiles([]);
    setZone(undefined);
    setStage({ kind: 'idle' });
    if (inputRef.current) inputRef.current.value = '';
    // After the preview's controls vanish, the way on is choosing files again.
    requestAnimationFrame(() => chooseRef.current?.focus());
  }

  function cancelUpload() {
    const preview = stage.kind === 'working' ? stage.preview : null;
    uploadRef.current?.abort();
    uploadRef.current = null;
    if (preview) {
      // Back to the preview on screen, and to the zone it was made in.
      setZone(preview.timezone);
      setStage({ kind: 'preview', preview });
    } else reset();
  }

  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    setDragging(false);
    pick(Array.from(e.dataTransfer.files));
  };

  const busy = stage.kind === 'working';
  // While a preview is made, changing the files, app or zone starts it again; a real import, once
  // sent, is not interrupted.
  const locked = busy && stage.purpose === 'import';
  const shownPreview = stage.kind === 'preview' ? stage.preview : stage.kind === 'working' || stage.kind === 'failed' ? stage.preview : null;

  return (
    <div className="screen import" data-testid="import">
      <ScreenHead title="Import" subtitle="Bring your meals and sleep from Apple Health, Cronometer, MyFitnessPal, Oura or Fitbit. Files are read on this computer; nothing is sent anywhere." />

      <section className="card" aria-labelledby="import-files-title">
        <header className="card__head">
          <h2 id="import-files-title">Files</h2>
        </header>
        <div
          className={`dropzone ${dragging ? 'is-over' : ''}`}
          data-testid="dropzone"
          onDragEnter={(e) => (e.preventDefault(), setDragging(true))}
          onDragOver={(e) => {
            e.preventDefault();
            e.dataTransfer.dropEffect = 'copy';
          }}
          onDragLeave={(e) => {
            if (!e.currentTarget.contains(e.relatedTarget as Node | null)) setDragging(false);
          }}
          onDrop={onDrop}
        >
          <Icon name="upload" size={28} />
          <p className="dropzone__title">{files.length ? plural(files.length, 'file') + ' chosen' : 'Drop an export here'}</p>
          {files.length ? (
            <ul className="dropzone__files" aria-label="Chosen files">
              {files.map((f, i) => (
                <li key={`${i}-${f.name}`}>
                  <span className="dropzone__name">{f.name}</span> <span className="muted">{fmtBytes(f.size)}</span>
                </li>
              ))}
            </ul>
          ) : (
            <p className="muted">The zip as the app sent it, or files taken out of it. Several files of one app can go together.</p>
          )}
          <button type="button" ref={chooseRef} className={`btn ${files.length ? '' : 'btn--primary'}`} onClick={() => inputRef.current?.click()} disabled={locked} data-testid="choose-files">
            {files.length ? 'Choose other files…' : 'Choose files…'}
          </button>
          <input
            ref={inputRef}
            type="file"
            multiple
            hidden
            accept=".zip,.xml,.csv,.json,application/zip,text/csv,application/json,text/xml"
            data-testid="file-input"
            onChange={(e) => {
              pick(Array.from(e.target.files ?? []));
              e.target.value = '';
            }}
          />
        </div>
        <Field label="Files from" className="import-source" hint="Found from the files’ content; choose the app only if that fails.">
          {({ id, describedBy }) => (
            <select
              id={id}
              value={source}
              aria-describedby={describedBy}
              disabled={locked}
              onChange={(e) => {
                setSource(e.target.value);
                if (files.length) void run('preview', { files, source: e.target.value, zone }, null);
              }}
              data-testid="source-select"
            >
              <option value="">Detect from their content</option>
              {SOURCES.map((s) => (
                <option key={s.value} value={s.value}>
                  {s.label}
                </option>
              ))}
            </select>
          )}
        </Field>
      </section>

      {stage.kind === 'working' ? <Progress stage={stage} onCancel={cancelUpload} /> : null}

      {stage.kind === 'failed' ? (
        <div className="import__error" data-testid="import-error">
          <ErrorNote
            error={stage.error}
            // Files the service refused (4xx) fail the same way again; a lost connection may not.
            onRetry={files.length && !(stage.error instanceof ApiError && stage.error.status >= 400 && stage.error.status < 500) ? () => void run(stage.purpose, { files, source, zone }, stage.preview) : undefined}
          />
        </div>
      ) : null}

      {shownPreview && stage.kind !== 'done' ? (
        <Preview
          preview={shownPreview}
          headingRef={headingRef}
          busy={busy}
          locked={locked}
          zone={zone}
          onZone={(z) => {
            setZone(z);
            void run('preview', { files, source, zone: z }, shownPreview);
          }}
          onConfirm={() => void run('import', { files, source, zone }, shownPreview)}
          onCancel={reset}
          fallbackZone={app.tz}
        />
      ) : null}

      {stage.kind === 'done' ? <Result result={stage.result} headingRef={headingRef} onMore={reset} /> : null}

      <PastImports history={history} />
    </div>
  );
}

function Progress({ stage, onCancel }: { stage: Extract<Stage, { kind: 'working' }>; onCancel: () => void }) {
  const doing = stage.purpose === 'preview' ? 'Checking' : 'Importing';
  const percent = stage.total ? Math.min(100, Math.round((stage.sent / stage.total) * 100)) : 0;
  return (
    <section className="card import-progress" aria-label="Progress" data-testid="import-progress">
      {/* Only the phase is announced; the bar itself carries the percentage. */}
      <p role="status" className="import-progress__label" id="import-progress-label">
        {stage.processing ? `${doing}: reading the files…` : `${doing}: sending ${fmtBytes(stage.total)} to Chyme…`}
      </p>
      {stage.processing ? (
        <progress aria-labelledby="import-progress-label" data-testid="progress-processing" />
      ) : (
        <progress aria-labelledby="import-progress-label" value={stage.sent} max={stage.total || 1} aria-valuetext={`${percent}%`} data-testid="progress-upload" />
      )}
      <div className="import-progress__foot">
        <span className="muted small">
          {stage.processing ? 'Years of data can take a minute. Nothing is written until every file has been read.' : `${percent}% · ${fmtBytes(stage.sent)} of ${fmtBytes(stage.total)}`}
        </span>
        {stage.processing ? null : (
          <button type="button" className="btn btn--small btn--ghost" onClick={onCancel}>
            Cancel
          </button>
        )}
      </div>
    </section>
  );
}

function Preview(props: {
  preview: Import;
  headingRef: RefObject<HTMLHeadingElement | null>;
  busy: boolean;
  locked: boolean;
  zone: string | undefined;
  fallbackZone: string;
  onZone: (zone: string) => void;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const p = props.preview;
  const zoneNow = props.zone ?? p.timezone ?? props.fallbackZone;
  const zones = useMemo(() => timeZoneNames(zoneNow), [zoneNow]);
  const range = dayRange(p);
  const nothing = p.meals_added === 0 && p.sleep_added === 0;
  const what = countsText(p.meals_added, p.sleep_added);
  return (
    <section className="card import-preview" aria-labelledby="import-preview-title" data-testid="import-preview" aria-busy={props.busy}>
      <header className="card__head">
        <h2 id="import-preview-title" tabIndex={-1} ref={props.headingRef}>
          Preview: {sourceName(p.source)}
        </h2>
        <Chip tone="pending">Nothing written yet</Chip>
      </header>
      <p className="muted small import__files">Read {p.files.join(', ')}</p>
      <dl className="facts import-facts" data-testid="preview-facts">
        <div>
          <dt>Meals to add</dt>
          <dd>{fmtNumber(p.meals_added)}</dd>
        </div>
        <div>
          <dt>Nights to add</dt>
          <dd>{fmtNumber(p.sleep_added)}</dd>
        </div>
        <div>
          <dt>Already here (skipped)</dt>
          <dd>{fmtNumber(p.duplicates_skipped)}</dd>
        </div>
        <div>
          <dt>Days</dt>
          <dd>{range ?? 'None'}</dd>
        </div>
      </dl>

      {p.zone_assumed ? (
        <Field
          label="Time zone of these files"
          className="import-zone"
          hint="Some times in these files have no zone of their own, so they are read in this one. Meals or nights logged while travelling are off by the time difference."
        >
          {({ id, describedBy }) => (
            <select id={id} value={zoneNow} aria-describedby={describedBy} disabled={props.locked} onChange={(e) => props.onZone(e.target.value)} data-testid="zone-select">
              <TimeZoneOptions zones={zones} />
            </select>
          )}
        </Field>
      ) : (
        <p className="small muted" data-testid="zone-note">
          Every time in these files carries its own offset from UTC.
        </p>
      )}

      {p.warnings.length ? <Warnings warnings={p.warnings} /> : null}
      <Samples preview={p} />

      {nothing ? (
        <p className="import__nothing" data-testid="nothing-new">
          Nothing new to import: everything in these files is already in Chyme.
        </p>
      ) : null}
      <div className="form-actions">
        <button type="button" className="btn btn--ghost" onClick={props.onCancel} disabled={props.locked}>
          Cancel
        </button>
        {nothing ? null : (
          <button type="button" className="btn btn--primary" onClick={props.onConfirm} disabled={props.busy} data-testid="confirm-import">
            Import {what}
          </button>
        )}
      </div>
    </section>
  );
}

const WARNINGS_SHOWN = 50;

function Warnings({ warnings }: { warnings: Import['warnings'] }) {
  const [all, setAll] = useState(false);
  const shown = all ? warnings : warnings.slice(0, WARNINGS_SHOWN);
  return (
    <div className="import-warnings" data-testid="warnings">
      <h3>{plural(warnings.length, 'row')} passed over</h3>
      <p className="small muted">The rest of each file is imported.</p>
      <ul>
        {shown.map((w, i) => (
          <li key={i}>
            <span className="import-warnings__where">
              {w.file}
              {w.line !== null ? `, line ${w.line}` : ''}
            </span>
            <span>{w.message}</span>
          </li>
        ))}
      </ul>
      {warnings.length > shown.length ? (
        <button type="button" className="btn btn--small btn--ghost" onClick={() => setAll(true)}>
          Show all {fmtNumber(warnings.length)}
        </button>
      ) : null}
    </div>
  );
}

function Samples({ preview }: { preview: Import }) {
  const meals = preview.samples?.meals ?? [];
  const nights = preview.samples?.sleep_sessions ?? [];
  if (!meals.length && !nights.length) return null;
  return (
    <div className="import-samples" data-testid="samples">
      {meals.length ? (
        <div className="import-table">
          <table>
            <caption>First meals</caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Meal</th>
                <th scope="col">What</th>
                <th scope="col" className="num">
                  kcal
                </th>
              </tr>
            </thead>
            <tbody>
              {meals.map((m, i) => (
                <tr key={i}>
                  <td>
                    {livedTime(m.timestamp, m.utc_offset_min)}
                    {m.inferred_time ? <span className="muted small"> (usual time; the file has only the day)</span> : null}
                  </td>
                  <td>{capitalize(m.meal_type)}</td>
                  <td>{m.description || m.foods.map((f) => f.name).join(', ') || '—'}</td>
                  <td className="num">{fmtNumber(m.macros.calories)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {nights.length ? (
        <div className="import-table">
          <table>
            <caption>First nights</caption>
            <thead>
              <tr>
                <th scope="col">From</th>
                <th scope="col">To</th>
                <th scope="col">Length</th>
                <th scope="col">Kind</th>
              </tr>
            </thead>
            <tbody>
              {nights.map((s, i) => (
                <tr key={i}>
                  <td>{fmtDateTime(s.start, preview.timezone)}</td>
                  <td>{fmtTime(s.end, preview.timezone)}</td>
                  <td>{fmtDuration(s.duration_min)}</td>
                  <td>{s.nap ? 'Nap' : 'Night'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </div>
  );
}

function summary(i: Import): string {
  const added = countsText(i.meals_added, i.sleep_added);
  const range = dayRange(i);
  return `${added} from ${sourceName(i.source)}${range ? `, ${range}` : ''}${i.duplicates_skipped ? `; ${plural(i.duplicates_skipped, 'record')} already here skipped` : ''}.`;
}

function Result({ result, headingRef, onMore }: { result: Import; headingRef: RefObject<HTMLHeadingElement | null>; onMore: () => void }) {
  return (
    <section className="card import-result" aria-labelledby="import-result-title" data-testid="import-result">
      <header className="card__head">
        <h2 id="import-result-title" tabIndex={-1} ref={headingRef}>
          Imported
        </h2>
        <Chip tone="positive">Done</Chip>
      </header>
      <p>Added {summary(result)}</p>
      {result.warnings.length ? <p className="small muted">{plural(result.warnings.length, 'row')} passed over, as the preview listed.</p> : null}
      <p className="small muted">Scores and the timeline now include these days. You can undo this import below.</p>
      <div className="form-actions">
        <button type="button" className="btn" onClick={onMore}>
          Import more files
        </button>
      </div>
    </section>
  );
}

interface ImportHistory {
  items: Import[] | null;
  hasMore: boolean;
  error: unknown;
  reload: () => void;
  more: () => void;
  replace: (i: Import) => void;
}

function useImportHistory(): ImportHistory {
  const [items, setItems] = useState<Import[] | null>(null);
  const [hasMore, setHasMore] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const ctrl = new AbortController();
    listImports({ limit: 20 }, ctrl.signal)
      .then((page) => {
        setItems(page.data);
        setHasMore(page.has_more);
        setError(null);
      })
      .catch((err: unknown) => {
        if (!ctrl.signal.aborted) setError(err);
      });
    return () => ctrl.abort();
  }, [tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  const more = useCallback(() => {
    const last = items?.[items.length - 1];
    if (!last?.id) return;
    listImports({ limit: 20, starting_after: last.id })
      .then((page) => {
        setItems((prev) => [...(prev ?? []), ...page.data]);
        setHasMore(page.has_more);
      })
      .catch(setError);
  }, [items]);
  const replace = useCallback((i: Import) => setItems((prev) => prev?.map((x) => (x.id === i.id ? i : x)) ?? null), []);
  return { items, hasMore, error, reload, more, replace };
}

function PastImports({ history }: { history: ImportHistory }) {
  return (
    <section className="card" aria-labelledby="past-imports-title" data-testid="past-imports">
      <header className="card__head">
        <h2 id="past-imports-title">Past imports</h2>
      </header>
      {history.error ? <ErrorNote error={history.error} onRetry={history.reload} /> : null}
      {!history.items && !history.error ? <Loading /> : null}
      {history.items?.length === 0 ? <Empty>No imports yet.</Empty> : null}
      {history.items?.length ? (
        <ul className="import-list">
          {history.items.map((i) => (
            <PastImport key={i.id} item={i} onUndone={history.replace} />
          ))}
        </ul>
      ) : null}
      {history.hasMore ? (
        <button type="button" className="btn btn--small" onClick={history.more}>
          Show older imports
        </button>
      ) : null}
    </section>
  );
}

function keptText(kept: NonNullable<Import['undo']>['kept']): string | null {
  const edited = kept.filter((k) => k.reason === 'edited');
  if (!edited.length) return null;
  const meals = edited.filter((k) => k.object === 'nutrition.meal').length;
  return `Kept ${countsText(meals, edited.length - meals)} you edited since the import.`;
}

function PastImport({ item, onUndone }: { item: Import; onUndone: (i: Import) => void }) {
  const app = useApp();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const summaryRef = useRef<HTMLParagraphElement>(null);
  const [justUndone, setJustUndone] = useState(false);
  const undo = item.undo;
  // The Undo button is gone once it worked: focus moves to what it did.
  useEffect(() => {
    if (justUndone) summaryRef.current?.focus();
  }, [justUndone]);
  const kept = undo ? keptText(undo.kept) : null;

  async function runUndo() {
    if (!item.id) return;
    setBusy(true);
    setError(null);
    try {
      const r = await undoImport(item.id);
      onUndone(r);
      setJustUndone(true);
      app.toast(`Import undone: ${countsText(r.undo?.meals_removed ?? 0, r.undo?.sleep_removed ?? 0)} removed.`);
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <li className={`import-row ${undo ? 'is-undone' : ''}`} data-testid="import-row">
      <div className="import-row__main">
        <p className="import-row__title">
          {capitalize(sourceName(item.source))}
          <span className="muted small"> · {fmtDateTime(item.created_at, app.tz)}</span>
          {undo ? <Chip>Undone</Chip> : null}
        </p>
        <p className="small">{summary(item)}</p>
        <p className="small muted import__files">{item.files.join(', ')}</p>
        {undo ? (
          <p className="small import-row__undo" data-testid="undo-summary" tabIndex={-1} ref={summaryRef}>
            Undone {fmtDateTime(undo.undone_at, app.tz)}: removed {countsText(undo.meals_removed, undo.sleep_removed)}.
            {kept ? <strong> {kept}</strong> : null}
          </p>
        ) : null}
        {error ? (
          <p className="form-error" role="alert">
            {error}
          </p>
        ) : null}
      </div>
      {undo || !item.id ? null : (
        <div className="import-row__actions">
          {busy ? (
            <Loading label="Undoing" />
          ) : (
            <ConfirmButton
              label="Undo"
              confirmLabel="Undo this import"
              ariaLabel={`Undo the import from ${sourceName(item.source)} of ${fmtDateTime(item.created_at, app.tz)}`}
              onConfirm={() => void runUndo()}
            />
          )}
        </div>
      )}
    </li>
  );
}
