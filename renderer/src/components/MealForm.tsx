import { useEffect, useRef, useState, type FormEvent, type KeyboardEvent } from 'react';
import { idempotencyKey } from '../api/client';
import { getFood } from '../api/foods';
import { createMeal, deleteMeal, updateMeal } from '../api/meals';
import { MEAL_TYPES, type Meal, type MealInput, type MealType, type NutrientKey } from '../api/types';
import { useApp } from '../lib/app';
import { entryFromStored, entryInput, fmtNutrient, isBlank, parseAmount, refreshEntry, totalsOf, type Entry, type MealTotals } from '../lib/foods';
import { capitalize, guessMealType, mealInput, mealNumber, mealTitle, typedIn, type NumberKey } from '../lib/meals';
import { clock, fmtTime, fromLocalInput, isoAsLived, isoInZone, localParts, toLocalInput } from '../lib/time';
import { MealFoods } from './MealFoods';
import { SaveAsMeal } from './SaveAsMeal';
import { Field, FormError, Segmented, useApiForm, type FieldErrors } from './ui';
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
/** Fields an edit may clear (sent as null); a cleared calories field keeps the stored value. */
const NULLABLE: readonly NumberField[] = NUMBER_FIELDS.map((f) => f.name).filter((n) => n !== 'macros.calories');

interface FormState {
  time: string;
  mealType: MealType;
  description: string;
  foods: Entry[];
  numbers: Record<NumberField, string>;
}

const emptyNumbers = (): Record<NumberField, string> =>
  Object.fromEntries(NUMBER_FIELDS.map((f) => [f.name, ''])) as Record<NumberField, string>;

function blankState(tz: string): FormState {
  const now = clock.now();
  const p = localParts(now, tz);
  return { time: toLocalInput(now, tz), mealType: guessMealType(p.hour * 60 + p.minute), description: '', foods: [], numbers: emptyNumbers() };
}


const numberKey = (field: NumberField) => field.split('.')[1] as NumberKey;

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
  return {
    time: toLocalInput(atNow ? clock.now() : Date.parse(meal.timestamp), tz),
    mealType: meal.meal_type,
    description: meal.description,
    foods,
    numbers: n,
  };
}

/** Parses a typed number; '' is "not given", anything unparsable an error message. */
function parseNum(raw: string): number | null | string {
  const s = raw.trim().replace(',', '.');
  if (s === '') return null;
  const n = Number(s);
  return Number.isFinite(n) ? n : 'Enter a number.';
}

function buildBody(s: FormState, tz: string, editing: Meal | null): { body: MealInput } | { errors: FieldErrors } {
  const errors: FieldErrors = {};
  const ts = fromLocalInput(s.time, tz);
  if (Number.isNaN(ts)) errors.timestamp = 'Enter a date and time.';
  // An edit that leaves the time alone keeps the offset the meal was eaten at, and so its day.
  const sameTime = editing && s.time === toLocalInput(Date.parse(editing.timestamp), tz);
  const timestamp = Number.isNaN(ts) ? '' : sameTime ? isoAsLived(editing) : isoInZone(ts, tz);
  const body: MealInput = { timestamp, meal_type: s.mealType, description: s.description.trim() };
  const macros: Record<string, number | null> = {};
  const micros: Record<string, number | null> = {};
  for (const f of NUMBER_FIELDS) {
    const v = parseNum(s.numbers[f.name]);
    if (typeof v === 'string') {
      errors[f.name] = v;
      continue;
    }
    const [group, key] = f.name.split('.') as ['macros' | 'micros', string];
    // A blank field is "not typed": left out, or on an edit, null for a value that was typed, which
    // hands the nutrient back to the foods (or clears it when no food knows it).
    if (v === null && !(editing && NULLABLE.includes(f.name) && typedIn(editing, numberKey(f.name)))) continue;
    (group === 'macros' ? macros : micros)[key] = v;
  }
  if (Object.keys(macros).length) body.macros = macros;
  if (Object.keys(micros).length) body.micros = micros;
  const foods = foodsBody(s.foods, errors);
  // An edit sends the foods only when they changed: unchanged entries keep the numbers they were logged with.
  const unchanged = editing && JSON.stringify(foods) === JSON.stringify(editing.foods.map((f) => entryInput(entryFromStored(f))));
  if ((foods.length || (editing && s.foods.length === 0)) && !unchanged) body.foods = foods;
  return Object.keys(errors).length ? { errors } : { body };
}

/** The entries as the API takes them; a typed amount that is not a number is an error by its field. */
function foodsBody(entries: readonly Entry[], errors: FieldErrors): ReturnType<typeof entryInput>[] {
  return entries.filter((e) => !isBlank(e)).map((e, i) => {
    const raw = e.kind === 'free' ? e.calories : e.quantity;
    const n = parseAmount(raw);
    if (n === null || n < 0) errors[`foods.${i}.${e.kind === 'free' ? 'calories' : 'quantity'}`] = raw.trim() ? 'Enter a number.' : e.kind === 'free' ? 'Enter the calories.' : 'Enter an amount.';
    return entryInput(e);
  });
}

/**
 * The meal form: log a new meal (time defaults to now), or edit / copy an existing one. API
 * validation errors appear next to the field their `param` names, and focus moves to the first.
 */
export function MealForm({ draft, onDone, onSaved }: { draft: { mode: 'edit' | 'copy'; meal: Meal } | null; onDone: () => void; onSaved: () => void }) {
  const app = useApp();
  const editing = draft?.mode === 'edit' ? draft.meal : null;
  const [state, setState] = useState<FormState>(() => (draft ? stateFromMeal(draft.meal, app.tz, draft.mode === 'copy') : blankState(app.tz)));
  const { errors, setErrors, busy, send } = useApiForm(
    (p) => p === 'timestamp' || p === 'meal_type' || p === 'description' || p.startsWith('macros.') || p.startsWith('micros.') || /^foods\.\d+\./.test(p) || p === 'foods',
  );
  const formRef = useRef<HTMLFormElement>(null);
  const lastAttempt = useRef<{ json: string; key: string } | null>(null);
  // Bumped when a meal is logged: the person's recent and frequent foods have changed.
  const [logged, setLogged] = useState(0);

  useEffect(() => {
    setState(draft ? stateFromMeal(draft.meal, app.tz, draft.mode === 'copy') : blankState(app.tz));
    setErrors({});
    if (draft) formRef.current?.querySelector<HTMLInputElement>('input')?.focus();
    // Entries from the table get their food's portions (to change the unit) once it is fetched;
    // a food deleted since keeps the numbers it was logged with.
    const ids = [...new Set((draft?.meal.foods ?? []).flatMap((f) => (f.food_id ? [f.food_id] : [])))];
    if (!ids.length) return;
    const ctrl = new AbortController();
    void Promise.all(ids.map((id) => getFood(id, ctrl.signal).catch(() => null))).then((foods) => {
      if (ctrl.signal.aborted) return;
      const byId = new Map(foods.flatMap((f) => (f ? [[f.id, f] as const] : [])));
      setState((st) => ({ ...st, foods: st.foods.map((e) => (e.kind === 'food' && byId.has(e.foodId) ? refreshEntry(e, byId.get(e.foodId)!) : e)) }));
    });
    return () => ctrl.abort();
  }, [draft, app.tz]);

  useEffect(() => {
    if (Object.keys(errors).some((k) => k !== '')) {
      formRef.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus();
    }
  }, [errors]);

  const totals = totalsOf(state.foods);
  const update = (patch: Partial<FormState>) => setState((s) => ({ ...s, ...patch }));
  const setNumber = (k: NumberField, v: string) => setState((s) => ({ ...s, numbers: { ...s.numbers, [k]: v } }));
  const setEntries = (fn: (entries: Entry[]) => Entry[]) => setState((s) => ({ ...s, foods: fn(s.foods) }));

  /** Ctrl+Enter (⌘+Enter) logs the meal from anywhere in the form. */
  function onKeyDown(e: KeyboardEvent<HTMLFormElement>) {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey) && formRef.current?.contains(e.target as Node)) {
      e.preventDefault();
      formRef.current.requestSubmit();
    }
  }

  async function submit(e: FormEvent) {
    e.preventDefault();
    const built = buildBody(state, app.tz, editing);
    if ('errors' in built) {
      setErrors(built.errors);
      return;
    }
    setErrors({});
    await send(async () => {
      if (editing) {
        // Numbers that were sums go back to being sums (null hands them to the foods).
        const before = mealInput(editing, isoAsLived(editing), { handBack: true });
        const saved = await updateMeal(editing.id, built.body);
        // Typed calories cannot be handed back to the foods: the undo types the old number.
        if (typedIn(saved, 'calories') && !typedIn(editing, 'calories')) before.macros = { ...before.macros, calories: editing.macros.calories };
        app.toast(`Saved “${mealTitle(saved)}”.`, {
          action: {
            label: 'Undo',
            run: async () => {
              await updateMeal(editing.id, before);
              onSaved();
            },
          },
        });
        onDone();
      } else {
        // Same body again (a retry after a lost response) reuses its key; a changed body gets a new one.
        const json = JSON.stringify(built.body);
        if (lastAttempt.current?.json !== json) lastAttempt.current = { json, key: idempotencyKey() };
        const created = await createMeal(built.body, lastAttempt.current.key);
        lastAttempt.current = null;
        app.toast(`Logged ${created.meal_type} at ${fmtTime(created.timestamp, app.tz)}.`, {
          action: {
            label: 'Undo',
            run: async () => {
              await deleteMeal(created.id);
              onSaved();
            },
          },
        });
        setState(blankState(app.tz));
        setLogged((n) => n + 1);
        if (draft) onDone();
      }
      onSaved();
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
      <div className="grid grid--when">
        <Field label="When" error={errors.timestamp}>
          {({ id, describedBy, invalid }) => (
            <div className="input-row">
              <input
                id={id}
                name="timestamp"
                type="datetime-local"
                value={state.time}
                onChange={(e) => update({ time: e.target.value })}
                aria-describedby={describedBy}
                aria-invalid={invalid}
              />
              <button type="button" className="btn btn--small btn--ghost" onClick={() => update({ time: toLocalInput(clock.now(), app.tz) })}>
                Now
              </button>
            </div>
          )}
        </Field>
        <div className={`field ${errors.meal_type ? 'field--invalid' : ''}`}>
          <Segmented
            label="Meal type"
            name="meal_type"
            value={state.mealType}
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

      <MealFoods entries={state.foods} setEntries={setEntries} errors={errors} refreshKey={logged} />

      <fieldset className="nutrients">
        <legend>Nutrition</legend>
        <p className="field__hint meal-form__nutrients-hint">
          {state.foods.length ? 'Blank numbers are the sums of the foods; a number typed here replaces its sum.' : 'Optional when you add foods: their nutrients add up.'}
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
                  value={state.numbers[f.name]}
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

      <div className="form-actions">
        <button type="submit" className="btn btn--primary" disabled={busy}>
          {editing ? 'Save changes' : 'Log meal'}
        </button>
        <span className="field__hint form-actions__hint">or Ctrl+Enter</span>
        <SaveAsMeal entries={state.foods} mealType={state.mealType} defaultName={state.description.trim() || state.foods.filter((f) => !isBlank(f)).map((f) => f.name).join(', ')} />
      </div>
    </form>
  );
}

/** "105": the foods' sum, as the placeholder of a nutrient field left blank while the meal has foods that know it. */
function fromFoods(totals: MealTotals, field: NumberField): string | undefined {
  const k: NutrientKey = numberKey(field);
  if (!totals.known.has(k)) return undefined;
  return `${totals.partial.has(k) ? '≥ ' : ''}${fmtNutrient(k, totals.values[k])}`;
}

/** Calories only, now: the fastest way to log something. */
export function QuickAdd({ onSaved, label = 'Quick add (kcal, now)' }: { onSaved: () => void; label?: string }) {
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
      setCalories('');
      onSaved();
      app.toast(`Added ${n} kcal at ${fmtTime(created.timestamp, app.tz)}.`, {
        action: { label: 'Undo', run: () => deleteMeal(created.id).then(onSaved) },
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
}
