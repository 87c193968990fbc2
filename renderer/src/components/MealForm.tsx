import { memo, startTransition, useCallback, useEffect, useMemo, useRef, useState, type FormEvent, type KeyboardEvent } from 'react';
import { ApiError, errorMessage, idempotencyKey } from '../api/client';
import { getFood } from '../api/foods';
import { createMeal, deleteMeal, getMeal, updateMeal } from '../api/meals';
import { MEAL_TYPES, type Meal, type MealInput, type MealPatch, type MealType, type NutrientKey } from '../api/types';
import { useApp } from '../lib/app';
import { useNow } from '../lib/hooks';
import { amountOf, entryFromStored, entryInput, fmtNutrient, isBlank, parseAmount, refreshEntry, totalsOf, type Entry, type MealTotals } from '../lib/foods';
import { capitalize, guessMealType, mealNumber, mealTitle, storedEntryInput, typedIn, type NumberKey, type OnMealsChange } from '../lib/meals';
import { clock, fmtDateTime, fmtDay, fmtOffset, fmtTime, isoAtOffset, isoInZone, localParts, offsetMinutes, toLocalInput, wallTimeInstants } from '../lib/time';
import { MealFoods } from './MealFoods';
import { SaveAsMeal } from './SaveAsMeal';
import { Field, FormError, noErrors, Segmented, useApiForm, type FieldErrors } from './ui';
import './MealForm.css';

const NUMBER_FIELDS = [
  { name: 'macros.calories', label: 'Calories', unit: 'kcal' },
  { name: 'macros.protein_g', label: 'Protein', unit: 'g' },
  { name: 'macros.carbs_g', label: 'Carbs', unit: 'g' },
  { name: 'macros.fat_g', label: 'Fat', unit: 'g' },
  { name: 'macros.fiber_g', label: 'Fibre', unit: 'g' },
  { name: 'micros.sodium_mg', label: 'Sodium', unit: 'mg' },
  { name: 'micros.caffeine_mg', label: 'Caffeine', unit: 'mg' },
] as const;
type NumberField = (typeof NUMBER_FIELDS)[number]['name'];

interface FormState {
  /** The "When" field as typed; null while it follows the clock (a new meal is logged at the moment it is submitted). */
  time: string | null;
  /** Which reading of a repeated or skipped wall time was picked (earliest first); null: the default one. */
  reading: number | null;
  /** Null while it follows the time (a new meal), until the person picks one. */
  mealType: MealType | null;
  description: string;
  foods: Entry[];
  numbers: Record<NumberField, string>;
}

const emptyNumbers = (): Record<NumberField, string> =>
  Object.fromEntries(NUMBER_FIELDS.map((f) => [f.name, ''])) as Record<NumberField, string>;

function blankState(): FormState {
  return { time: null, reading: null, mealType: null, description: '', foods: [], numbers: emptyNumbers() };
}

const numberKey = (field: NumberField) => field.split('.')[1] as NumberKey;

/** The form showing a meal: to edit it (at its own instant), or to log a copy of it (now). */
function stateFromMeal(meal: Meal, tz: string, atNow: boolean): FormState {
  const foods = meal.foods.map(entryFromStored);
  const n = emptyNumbers();
  // A number that is the sum of the meal's foods was computed, not typed: it stays blank (shown as
  // the live total) so that changing the foods changes it.
  for (const f of NUMBER_FIELDS) {
    const k = numberKey(f.name);
    const v = mealNumber(meal, k);
    n[f.name] = v === null || v === undefined || !typedIn(meal, k) ? '' : String(v);
  }
  const ms = Date.parse(meal.timestamp);
  const time = atNow ? null : toLocalInput(ms, tz);
  // A meal in a repeated hour shows which of the two it was.
  const readings = time === null ? [] : when({ time, reading: null }, tz, ms).readings;
  const reading = readings.length ? readings.findIndex((r) => Math.floor(r / 60_000) === Math.floor(ms / 60_000)) : -1;
  return { time, reading: reading >= 0 ? reading : null, mealType: meal.meal_type, description: meal.description, foods, numbers: n };
}

interface When {
  /** The instant the field means (NaN when it means none). */
  ms: number;
  /** Two readings (earliest first) when the wall time is repeated or skipped; else empty. */
  readings: number[];
  kind: 'repeated' | 'skipped' | null;
  picked: number;
}

/**
 * What the When field means: now while it follows the clock; else the typed wall time in the
 * user's zone, where a repeated time (the clocks go back) defaults to its first reading and a
 * skipped one (they go forward) to the time after the change, unless the person picked another.
 */
function when(s: Pick<FormState, 'time' | 'reading'>, tz: string, now: number): When {
  if (s.time === null) return { ms: now, readings: [], kind: null, picked: 0 };
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2})/.exec(s.time);
  if (!m) return { ms: NaN, readings: [], kind: null, picked: 0 };
  const { instants, skipped } = wallTimeInstants(m[1]!, Number(m[2]) * 60 + Number(m[3]), tz);
  if (instants.length === 1) return { ms: instants[0]!, readings: [], kind: null, picked: 0 };
  const readings = instants.length ? instants : skipped;
  const picked = s.reading ?? (instants.length ? 0 : readings.length - 1);
  return { ms: readings[picked] ?? NaN, readings, kind: instants.length ? 'repeated' : 'skipped', picked };
}

/** The meal type the form stands for: the one picked, else the one the time suggests. */
function mealTypeOf(s: FormState, ms: number, tz: string): MealType {
  if (s.mealType) return s.mealType;
  const p = localParts(Number.isNaN(ms) ? clock.now() : ms, tz);
  return guessMealType(p.hour * 60 + p.minute);
}

/** Parses a typed number; '' is "not given", anything unparsable an error message. */
function parseNum(raw: string): number | null | string {
  const s = raw.trim().replace(',', '.');
  if (s === '') return null;
  const n = Number(s);
  return Number.isFinite(n) ? n : 'Enter a number.';
}

/** The foods as stored, as the form would send them back: what "unchanged foods" compares with. */
const storedFoodsInput = (meal: Meal) => JSON.stringify(meal.foods.map((f) => entryInput(entryFromStored(f))));

/**
 * The body to send. A new meal: every field, at the moment of submitting when the time follows
 * the clock. An edit: only the fields the person changed from `base` (the meal as the form showed
 * it), so a field not touched keeps what is stored: its instant and offset, `inferred_time`, the
 * calories and nutrients it has, whatever another client changed meanwhile.
 */
function buildBody(s: FormState, tz: string, now: number, edit: { meal: Meal; base: FormState } | null): { body: MealInput | MealPatch } | { errors: FieldErrors } {
  const errors: FieldErrors = {};
  const base = edit?.base;
  const w = when(s, tz, now);
  const body: MealPatch = {};
  if (!base || s.time !== base.time || w.ms !== when(base, tz, now).ms) {
    if (Number.isNaN(w.ms)) errors.timestamp = 'Enter a date and time.';
    else body.timestamp = isoInZone(w.ms, tz);
  }
  const type = mealTypeOf(s, w.ms, tz);
  if (!base || type !== base.mealType) body.meal_type = type;
  if (!base || s.description.trim() !== base.description.trim()) body.description = s.description.trim();
  const macros: Record<string, number | null> = {};
  const micros: Record<string, number | null> = {};
  for (const f of NUMBER_FIELDS) {
    if (base && s.numbers[f.name].trim() === base.numbers[f.name].trim()) continue;
    const v = parseNum(s.numbers[f.name]);
    if (typeof v === 'string') {
      errors[f.name] = v;
      continue;
    }
    // A blank field is "not typed": left out of a new meal; on an edit, a number cleared is sent as
    // null, which hands it back to the foods (calories too), or clears it when no food knows it.
    if (v === null && !base) continue;
    const [group, key] = f.name.split('.') as ['macros' | 'micros', string];
    (group === 'macros' ? macros : micros)[key] = v;
  }
  if (Object.keys(macros).length) body.macros = macros;
  if (Object.keys(micros).length) body.micros = micros;
  const foods = foodsBody(s.foods, errors);
  // An edit sends the foods only when they changed: unchanged entries keep the numbers they were logged with.
  if (edit) {
    if (JSON.stringify(foods) !== storedFoodsInput(edit.meal)) body.foods = foods;
  } else if (foods.length) body.foods = foods;
  return Object.keys(errors).length ? { errors } : { body: body as MealInput | MealPatch };
}

/** The entries as the API takes them; a typed amount that is not a number is an error by its field. */
function foodsBody(entries: readonly Entry[], errors: FieldErrors): ReturnType<typeof entryInput>[] {
  return entries.filter((e) => !isBlank(e)).map((e, i) => {
    const raw = e.kind === 'free' ? e.calories : e.quantity;
    const n = e.kind === 'free' ? parseAmount(raw) : (amountOf(e)?.quantity ?? null);
    if (n === null || n < 0) errors[`foods.${i}.${e.kind === 'free' ? 'calories' : 'quantity'}`] = raw.trim() ? 'Enter a number.' : e.kind === 'free' ? 'Enter the calories.' : 'Enter an amount.';
    return entryInput(e);
  });
}

/**
 * The patch that undoes `sent` on `meal` (as it was before): the old value of each field sent,
 * the instant at the offset it was stored with, and null for numbers that were sums (handing them
 * back to the foods).
 */
function undoOf(sent: MealPatch, meal: Meal): MealPatch {
  const out: MealPatch = {};
  if (sent.timestamp !== undefined) out.timestamp = isoAtOffset(Date.parse(meal.timestamp), meal.utc_offset_min);
  if (sent.meal_type !== undefined) out.meal_type = meal.meal_type;
  if (sent.description !== undefined) out.description = meal.description;
  const old = (k: NumberKey) => (typedIn(meal, k) ? (mealNumber(meal, k) ?? null) : null);
  if (sent.macros) out.macros = Object.fromEntries(Object.keys(sent.macros).map((k) => [k, old(k as NumberKey)]));
  if (sent.micros) out.micros = Object.fromEntries(Object.keys(sent.micros).map((k) => [k, old(k as NumberKey)]));
  if (sent.foods !== undefined) out.foods = meal.foods.map(storedEntryInput);
  return out;
}

/**
 * The form moved onto a newer version of the meal: fields the person changed keep their change,
 * every other field shows the newer version.
 */
function rebase(s: FormState, oldBase: FormState, newBase: FormState, oldMeal: Meal): FormState {
  const foodsChanged = JSON.stringify(s.foods.filter((e) => !isBlank(e)).map(entryInput)) !== storedFoodsInput(oldMeal);
  const timeChanged = s.time !== oldBase.time || s.reading !== oldBase.reading;
  return {
    time: timeChanged ? s.time : newBase.time,
    reading: timeChanged ? s.reading : newBase.reading,
    mealType: s.mealType !== oldBase.mealType ? s.mealType : newBase.mealType,
    description: s.description !== oldBase.description ? s.description : newBase.description,
    foods: foodsChanged ? s.foods : newBase.foods,
    numbers: Object.fromEntries(NUMBER_FIELDS.map((f) => [f.name, s.numbers[f.name] !== oldBase.numbers[f.name] ? s.numbers[f.name] : newBase.numbers[f.name]])) as Record<NumberField, string>,
  };
}

/** What another change did to the meal, field by field, as the person reads it. */
function changesBetween(a: Meal, b: Meal, tz: string): string[] {
  const out: string[] = [];
  if (a.timestamp !== b.timestamp) out.push(`When: ${fmtDateTime(a.timestamp, tz)} → ${fmtDateTime(b.timestamp, tz)}`);
  if (a.meal_type !== b.meal_type) out.push(`Meal type: ${capitalize(a.meal_type)} → ${capitalize(b.meal_type)}`);
  if (a.description !== b.description) out.push(`Description: “${a.description}” → “${b.description}”`);
  for (const f of NUMBER_FIELDS) {
    const k = numberKey(f.name);
    const [x, y] = [mealNumber(a, k), mealNumber(b, k)];
    if (x !== y) out.push(`${f.label}: ${x ?? '—'} → ${y ?? '—'} ${f.unit}`);
  }
  const names = (m: Meal) => m.foods.map((f) => f.name).join(', ') || 'none';
  if (JSON.stringify(a.foods) !== JSON.stringify(b.foods)) out.push(`Foods: ${names(a)} → ${names(b)}`);
  return out.length ? out : ['Saved again with the same values.'];
}

/** A later version of the meal being edited, found when saving: what changed, to reload onto. */
interface Conflict {
  fresh: Meal;
  etag: string | null;
  changes: string[];
}

/**
 * The meal form: log a new meal (time follows the clock until changed), or edit / copy an
 * existing one. API validation errors appear next to the field their `param` names, and focus
 * moves to the first. `onSaved` is given what the service answered (the meal it created or saved,
 * the id an undo deleted); after an undo that failed, nothing (the screen reloads). Memo: a screen
 * that shows the new meal at once renders again with the note, and the form (its foods'
 * suggestions) must not render with it.
 */
export const MealForm = memo(function MealForm({ draft, onDone, onSaved }: { draft: { mode: 'edit' | 'copy'; meal: Meal } | null; onDone: () => void; onSaved: OnMealsChange }) {
  const app = useApp();
  const editing = draft?.mode === 'edit' ? draft.meal : null;
  const [state, setState] = useState<FormState>(() => (draft ? stateFromMeal(draft.meal, app.tz, draft.mode === 'copy') : blankState()));
  // The version of the meal being edited that the form stands on: its ETag (from GET, then from
  // each save) goes in If-Match, so a save never silently overwrites someone else's change.
  const [version, setVersion] = useState<{ meal: Meal; etag: string | null } | null>(() => (editing ? { meal: editing, etag: null } : null));
  const [conflict, setConflict] = useState<Conflict | null>(null);
  const base = useMemo(() => (version ? stateFromMeal(version.meal, app.tz, false) : null), [version, app.tz]);
  const { errors, setErrors, busy, send } = useApiForm(
    (p) => p === 'timestamp' || p === 'meal_type' || p === 'description' || p.startsWith('macros.') || p.startsWith('micros.') || /^foods\.\d+\./.test(p) || p === 'foods',
  );
  const formRef = useRef<HTMLFormElement>(null);
  const lastAttempt = useRef<{ json: string; key: string } | null>(null);
  // Bumped when a meal is logged: the person's recent and frequent foods have changed.
  const [logged, setLogged] = useState(0);
  // While the time follows the clock the field shows it, a minute at a time; not while it has
  // focus, where a tick would overwrite a half-typed segment.
  const now = useNow(60_000);
  const [heldTime, setHeldTime] = useState<string | null>(null);

  useEffect(() => {
    setState(draft ? stateFromMeal(draft.meal, app.tz, draft.mode === 'copy') : blankState());
    setVersion(draft?.mode === 'edit' ? { meal: draft.meal, etag: null } : null);
    setConflict(null);
    setErrors({});
    if (draft) formRef.current?.querySelector<HTMLInputElement>('input')?.focus();
    const ctrl = new AbortController();
    // The meal as it is now, with its version: the list it came from may be a moment old.
    if (draft?.mode === 'edit') {
      void getMeal(draft.meal.id, ctrl.signal).then(
        (got) => {
          if (ctrl.signal.aborted) return;
          if (got.body.updated_at !== draft.meal.updated_at) {
            const oldBase = stateFromMeal(draft.meal, app.tz, false);
            setState((st) => rebase(st, oldBase, stateFromMeal(got.body, app.tz, false), draft.meal));
          }
          setVersion({ meal: got.body, etag: got.etag });
        },
        () => undefined, // Saving without a version still works (no If-Match); a deleted meal shows its 404 then.
      );
    }
    // Entries from the table get their food's portions (to change the unit) once it is fetched;
    // a food deleted since keeps the numbers it was logged with.
    const ids = [...new Set((draft?.meal.foods ?? []).flatMap((f) => (f.food_id ? [f.food_id] : [])))];
    if (ids.length) {
      void Promise.all(ids.map((id) => getFood(id, ctrl.signal).catch(() => null))).then((foods) => {
        if (ctrl.signal.aborted) return;
        const byId = new Map(foods.flatMap((f) => (f ? [[f.id, f] as const] : [])));
        setState((st) => ({ ...st, foods: st.foods.map((e) => (e.kind === 'food' && byId.has(e.foodId) ? refreshEntry(e, byId.get(e.foodId)!) : e)) }));
      });
    }
    return () => ctrl.abort();
  }, [draft, app.tz]);

  useEffect(() => {
    if (Object.keys(errors).some((k) => k !== '')) {
      formRef.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus();
    }
  }, [errors]);

  const update = (patch: Partial<FormState>) => setState((s) => ({ ...s, ...patch }));
  // Stable, so the foods and the nutrients (memo) skip the renders that leave them as they are:
  // the busy state when Log is pressed, the meal type picked.
  const setNumber = useCallback((k: NumberField, v: string) => setState((s) => ({ ...s, numbers: { ...s.numbers, [k]: v } })), []);
  const setEntries = useCallback((fn: (entries: Entry[]) => Entry[]) => setState((s) => ({ ...s, foods: fn(s.foods) })), []);
  const shown = when(state, app.tz, now);

  /** Ctrl+Enter (⌘+Enter) logs the meal from anywhere in the form. */
  function onKeyDown(e: KeyboardEvent<HTMLFormElement>) {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey) && formRef.current?.contains(e.target as Node)) {
      e.preventDefault();
      formRef.current.requestSubmit();
    }
  }

  /** Takes the newer version found when saving: the person's own changes stay on top of it. */
  function reload(c: Conflict) {
    if (!version || !base) return;
    setState((st) => rebase(st, base, stateFromMeal(c.fresh, app.tz, false), version.meal));
    setVersion({ meal: c.fresh, etag: c.etag });
    setConflict(null);
    formRef.current?.querySelector<HTMLButtonElement>('button[type="submit"]')?.focus();
  }

  async function submit(e: FormEvent) {
    e.preventDefault();
    // An untouched "now" is the moment of submitting.
    const at = clock.now();
    const built = buildBody(state, app.tz, at, version && base ? { meal: version.meal, base } : null);
    if ('errors' in built) {
      setErrors(built.errors);
      return;
    }
    setErrors(noErrors);
    await send(async () => {
      if (editing && version) {
        const body = built.body as MealPatch;
        const before = version.meal;
        let saved: Meal;
        try {
          saved = (await updateMeal(editing.id, body, version.etag)).body;
        } catch (err) {
          if (!(err instanceof ApiError && err.status === 412)) throw err;
          // Changed elsewhere since the form opened: show what changed and offer to reload onto it.
          const fresh = await getMeal(editing.id);
          setConflict({ fresh: fresh.body, etag: fresh.etag, changes: changesBetween(before, fresh.body, app.tz) });
          return;
        }
        const undo = undoOf(body, before);
        app.toast(`Saved “${mealTitle(saved)}”.`, {
          action: {
            label: 'Undo',
            run: async () => {
              try {
                // Only if nobody has changed the meal since this save.
                const current = await getMeal(editing.id);
                if (current.body.updated_at !== saved.updated_at) throw new Error('Not undone: the meal has changed since.');
                const reverted = await updateMeal(editing.id, undo, current.etag);
                onSaved({ saved: [reverted.body] });
              } catch (err) {
                app.toast(err instanceof ApiError && err.status === 412 ? 'Not undone: the meal has changed since.' : errorMessage(err), { tone: 'error' });
                onSaved();
              }
            },
          },
        });
        // As for a new meal below: the note first, the form's close and the list after it.
        startTransition(() => {
          onSaved({ saved: [saved] });
          onDone();
        });
      } else {
        const body = built.body as MealInput;
        // Same body again (a retry after a lost response) reuses its key; a changed body gets a new one.
        const json = JSON.stringify(body);
        if (lastAttempt.current?.json !== json) lastAttempt.current = { json, key: idempotencyKey() };
        const created = await createMeal(body, lastAttempt.current.key);
        lastAttempt.current = null;
        // The meal in the screen's list with the note, in one render: the form's reset after them.
        onSaved({ saved: [created] });
        app.toast(`Logged ${created.meal_type} at ${fmtTime(created.timestamp, app.tz)}.`, {
          action: {
            label: 'Undo',
            run: async () => {
              await deleteMeal(created.id);
              onSaved({ deleted: [created.id] });
            },
          },
        });
        // The form's reset (its foods' suggestions) renders after the note, in the transition that
        // frees the form again (useApiForm).
        startTransition(() => {
          setState(blankState());
          setLogged((n) => n + 1);
          if (draft) onDone();
        });
      }
    });
  }

  const heading = editing ? 'Edit meal' : draft?.mode === 'copy' ? 'Log a copy' : 'Log a meal';
  return (
    <form ref={formRef} className="meal-form" onSubmit={submit} onKeyDown={onKeyDown} noValidate aria-labelledby="meal-form-title" data-testid="meal-form">
      <div className="meal-form__head">
        <h2 id="meal-form-title">{heading}</h2>
        {draft ? (
          <button type="button" className="btn btn--ghost btn--small" onClick={onDone}>
            Cancel
          </button>
        ) : null}
      </div>
      <FormError errors={errors} />
      {conflict ? (
        <div className="meal-form__conflict" role="alert" data-testid="meal-conflict">
          <p>
            <strong>This meal was changed elsewhere since you opened it,</strong> so nothing was saved. The other change:
          </p>
          <ul>
            {conflict.changes.map((c) => (
              <li key={c}>{c}</li>
            ))}
          </ul>
          <p className="field__hint">Reload takes that change and keeps your own changes on top of it; then save again.</p>
          <div className="input-row">
            <button type="button" className="btn btn--small btn--primary" onClick={() => reload(conflict)}>
              Reload
            </button>
          </div>
        </div>
      ) : null}
      <div className="grid grid--when">
        <Field label="When" error={errors.timestamp} hint={state.time === null ? 'Now: the moment you log it, until you change it.' : undefined}>
          {({ id, describedBy, invalid }) => (
            <div className="input-row">
              <input
                id={id}
                name="timestamp"
                type="datetime-local"
                value={state.time ?? heldTime ?? toLocalInput(now, app.tz)}
                onChange={(e) => update({ time: e.target.value, reading: null })}
                onFocus={() => setHeldTime(toLocalInput(clock.now(), app.tz))}
                onBlur={() => setHeldTime(null)}
                aria-describedby={describedBy}
                aria-invalid={invalid}
              />
              <button
                type="button"
                className="btn btn--small btn--ghost"
                // A new meal goes back to following the clock; an edit takes this minute.
                onClick={() => update(editing ? { time: toLocalInput(clock.now(), app.tz), reading: null } : { time: null, reading: null })}
              >
                Now
              </button>
            </div>
          )}
        </Field>
        <div className={`field ${errors.meal_type ? 'field--invalid' : ''}`}>
          <Segmented
            label="Meal type"
            name="meal_type"
            value={mealTypeOf(state, shown.ms, app.tz)}
            options={MEAL_TYPES.map((t) => ({ value: t, label: capitalize(t) }))}
            onChange={(v) => update({ mealType: v })}
          />
          {errors.meal_type ? (
            <p className="field__error" role="alert">
              {errors.meal_type}
            </p>
          ) : null}
        </div>
      </div>
      {shown.kind && state.time ? <WallTimeChoice when={shown} wall={state.time} tz={app.tz} onPick={(reading) => update({ reading })} /> : null}
      <Field label="Description" error={errors.description}>
        {({ id, describedBy, invalid }) => (
          <input
            id={id}
            name="description"
            type="text"
            value={state.description}
            placeholder="Porridge with banana and honey"
            onChange={(e) => update({ description: e.target.value })}
            aria-describedby={describedBy}
            aria-invalid={invalid}
            autoComplete="off"
          />
        )}
      </Field>

      <MealFoodsMemo entries={state.foods} setEntries={setEntries} errors={errors} refreshKey={logged} />

      <NutrientFields foods={state.foods} numbers={state.numbers} errors={errors} setNumber={setNumber} />

      <div className="form-actions">
        <button type="submit" className="btn btn--primary" disabled={busy}>
          {editing ? 'Save changes' : 'Log meal'}
        </button>
        <span className="field__hint form-actions__hint">or Ctrl+Enter</span>
        <SaveAsMealMemo entries={state.foods} mealType={mealTypeOf(state, shown.ms, app.tz)} defaultName={state.description.trim() || state.foods.filter((f) => !isBlank(f)).map((f) => f.name).join(', ')} />
      </div>
    </form>
  );
});

/**
 * A wall time the clocks pass twice (they go back) or skip (they go forward) in the user's zone:
 * the person picks which instant they mean.
 */
function WallTimeChoice({ when: w, wall, tz, onPick }: { when: When; wall: string; tz: string; onPick: (reading: number) => void }) {
  const hhmm = wall.slice(11, 16);
  const day = fmtDay(wall.slice(0, 10), 'long');
  const label = (ms: number, i: number) =>
    w.kind === 'repeated'
      ? `The ${i === 0 ? 'first' : 'second'} ${hhmm} (${fmtOffset(offsetMinutes(ms, tz))})`
      : `${fmtTime(ms, tz)} (${fmtOffset(offsetMinutes(ms, tz))}), ${i === 0 ? 'before' : 'after'} the change`;
  return (
    <fieldset className="meal-form__wall-time" data-testid="wall-time-choice">
      <legend>
        {w.kind === 'repeated' ? `${hhmm} happens twice on ${day}: the clocks go back an hour.` : `${hhmm} does not exist on ${day}: the clocks go forward an hour.`}{' '}
        Which do you mean?
      </legend>
      {w.readings.map((ms, i) => (
        <label key={ms} className="meal-form__wall-option">
          <input type="radio" name="wall-time-reading" checked={w.picked === i} onChange={() => onPick(i)} /> {label(ms, i)}
        </label>
      ))}
    </fieldset>
  );
}

const MealFoodsMemo = memo(MealFoods);
const SaveAsMealMemo = memo(SaveAsMeal);

/** The nutrient fields: a blank one shows the foods' sum as its placeholder. */
const NutrientFields = memo(function NutrientFields({ foods, numbers, errors, setNumber }: { foods: Entry[]; numbers: FormState['numbers']; errors: FieldErrors; setNumber: (k: NumberField, v: string) => void }) {
  const totals = totalsOf(foods);
  return (
    <fieldset className="nutrients">
      <legend>Nutrition</legend>
      <p className="field__hint meal-form__nutrients-hint">
        {foods.length ? 'Blank numbers are the sums of the foods; a number typed here replaces its sum.' : 'Optional when you add foods: their nutrients add up.'}
      </p>
      <div className="grid grid--nutrients">
        {NUMBER_FIELDS.map((f) => (
          <Field key={f.name} label={`${f.label} (${f.unit})`} error={errors[f.name]}>
            {({ id, describedBy, invalid }) => (
              <input
                id={id}
                name={f.name}
                type="text"
                inputMode="decimal"
                value={numbers[f.name]}
                placeholder={fromFoods(totals, f.name)}
                onChange={(e) => setNumber(f.name, e.target.value)}
                aria-describedby={describedBy}
                aria-invalid={invalid}
                autoComplete="off"
              />
            )}
          </Field>
        ))}
      </div>
    </fieldset>
  );
});

/** "105": the foods' sum, as the placeholder of a nutrient field left blank while the meal has foods that know it. */
function fromFoods(totals: MealTotals, field: NumberField): string | undefined {
  const k: NutrientKey = numberKey(field);
  if (!totals.known.has(k)) return undefined;
  return `${totals.partial.has(k) ? '≥ ' : ''}${fmtNutrient(k, totals.values[k])}`;
}

/** Calories only, now: the fastest way to log something. `onSaved` as MealForm's. */
export const QuickAdd = memo(function QuickAdd({ onSaved, label = 'Quick add (kcal, now)' }: { onSaved: OnMealsChange; label?: string }) {
  const app = useApp();
  const [calories, setCalories] = useState('');
  const { errors, setErrors, busy, send } = useApiForm((p) => p.startsWith('macros.'));

  async function submit(e: FormEvent) {
    e.preventDefault();
    const n = parseNum(calories);
    if (n === null || typeof n === 'string') {
      setErrors({ 'macros.calories': typeof n === 'string' ? n : 'Enter the calories.' });
      return;
    }
    await send(async () => {
      const now = clock.now();
      const p = localParts(now, app.tz);
      const created = await createMeal({ timestamp: isoInZone(now, app.tz), meal_type: guessMealType(p.hour * 60 + p.minute), macros: { calories: n } }, idempotencyKey());
      // Cleared with the form's busy state, after the note (useApiForm); the meal in the list with the note.
      startTransition(() => setCalories(''));
      onSaved({ saved: [created] });
      app.toast(`Added ${n} kcal at ${fmtTime(created.timestamp, app.tz)}.`, {
        action: { label: 'Undo', run: () => deleteMeal(created.id).then(() => onSaved({ deleted: [created.id] })) },
      });
    });
  }

  const err = errors['macros.calories'] ?? Object.values(errors)[0];
  return (
    <form className="quick-add" onSubmit={submit} noValidate aria-label="Quick add calories">
      <Field label={label} error={err}>
        {({ id, describedBy, invalid }) => (
          <div className="input-row">
            <input id={id} type="text" inputMode="decimal" value={calories} placeholder="250" onChange={(e) => setCalories(e.target.value)} aria-describedby={describedBy} aria-invalid={invalid} autoComplete="off" />
            <button type="submit" className="btn btn--small" disabled={busy}>
              Add
            </button>
          </div>
        )}
      </Field>
    </form>
  );
});
