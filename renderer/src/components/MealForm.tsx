import { useEffect, useRef, useState, type FormEvent } from 'react';
import { idempotencyKey } from '../api/client';
import { createMeal, deleteMeal, updateMeal } from '../api/meals';
import { MEAL_TYPES, type Meal, type MealInput, type MealType } from '../api/types';
import { useApp } from '../lib/app';
import { capitalize, guessMealType, mealInput, mealTitle } from '../lib/meals';
import { clock, fmtTime, fromLocalInput, isoInZone, localParts, toLocalInput } from '../lib/time';
import { Field, FormError, Icon, Segmented, useApiForm, type FieldErrors } from './ui';
import './MealForm.css';

interface FoodRow {
  key: number;
  name: string;
  calories: string;
}

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
  foods: FoodRow[];
  numbers: Record<NumberField, string>;
}

let foodKey = 0;
const emptyNumbers = (): Record<NumberField, string> =>
  Object.fromEntries(NUMBER_FIELDS.map((f) => [f.name, ''])) as Record<NumberField, string>;

function blankState(tz: string): FormState {
  const now = clock.now();
  const p = localParts(now, tz);
  return { time: toLocalInput(now, tz), mealType: guessMealType(p.hour * 60 + p.minute), description: '', foods: [], numbers: emptyNumbers() };
}

function stateFromMeal(meal: Meal, tz: string, atNow: boolean): FormState {
  const n = emptyNumbers();
  const set = (k: NumberField, v: number | null | undefined) => {
    n[k] = v === null || v === undefined ? '' : String(v);
  };
  set('macros.calories', meal.macros.calories);
  set('macros.protein_g', meal.macros.protein_g);
  set('macros.carbs_g', meal.macros.carbs_g);
  set('macros.fat_g', meal.macros.fat_g);
  set('macros.fiber_g', meal.macros.fiber_g);
  set('micros.sodium_mg', meal.micros.sodium_mg);
  set('micros.caffeine_mg', meal.micros.caffeine_mg);
  return {
    time: toLocalInput(atNow ? clock.now() : Date.parse(meal.timestamp), tz),
    mealType: meal.meal_type,
    description: meal.description,
    foods: meal.foods.map((f) => ({ key: ++foodKey, name: f.name, calories: String(f.calories) })),
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

function buildBody(s: FormState, tz: string, editing: boolean): { body: MealInput } | { errors: FieldErrors } {
  const errors: FieldErrors = {};
  const ts = fromLocalInput(s.time, tz);
  if (Number.isNaN(ts)) errors.timestamp = 'Enter a date and time.';
  const body: MealInput = { timestamp: Number.isNaN(ts) ? '' : isoInZone(ts, tz), meal_type: s.mealType, description: s.description.trim() };
  const macros: Record<string, number | null> = {};
  const micros: Record<string, number | null> = {};
  for (const f of NUMBER_FIELDS) {
    const v = parseNum(s.numbers[f.name]);
    if (typeof v === 'string') {
      errors[f.name] = v;
      continue;
    }
    const [group, key] = f.name.split('.') as ['macros' | 'micros', string];
    if (v === null && !(editing && NULLABLE.includes(f.name))) continue;
    (group === 'macros' ? macros : micros)[key] = v;
  }
  if (Object.keys(macros).length) body.macros = macros;
  if (Object.keys(micros).length) body.micros = micros;
  const foods = s.foods.filter((f) => f.name.trim() || f.calories.trim());
  if (foods.length || (editing && s.foods.length === 0)) {
    body.foods = foods.map((f, i) => {
      const c = parseNum(f.calories);
      if (typeof c === 'string') errors[`foods.${i}.calories`] = c;
      return { name: f.name.trim(), calories: typeof c === 'number' ? c : 0 };
    });
  }
  return Object.keys(errors).length ? { errors } : { body };
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

  useEffect(() => {
    setState(draft ? stateFromMeal(draft.meal, app.tz, draft.mode === 'copy') : blankState(app.tz));
    setErrors({});
    if (draft) formRef.current?.querySelector<HTMLInputElement>('input')?.focus();
  }, [draft, app.tz]);

  useEffect(() => {
    if (Object.keys(errors).some((k) => k !== '')) {
      formRef.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus();
    }
  }, [errors]);

  const foodSum = state.foods.reduce((s, f) => s + (Number(f.calories) || 0), 0);
  const update = (patch: Partial<FormState>) => setState((s) => ({ ...s, ...patch }));
  const setNumber = (k: NumberField, v: string) => setState((s) => ({ ...s, numbers: { ...s.numbers, [k]: v } }));
  const setFood = (key: number, patch: Partial<FoodRow>) =>
    setState((s) => ({ ...s, foods: s.foods.map((f) => (f.key === key ? { ...f, ...patch } : f)) }));

  async function submit(e: FormEvent) {
    e.preventDefault();
    const built = buildBody(state, app.tz, Boolean(editing));
    if ('errors' in built) {
      setErrors(built.errors);
      return;
    }
    setErrors({});
    await send(async () => {
      if (editing) {
        // Undo restores every field, including ones the edit newly filled in (null clears them).
        const before = {
          ...mealInput(editing, isoInZone(Date.parse(editing.timestamp), app.tz)),
          macros: { ...editing.macros, fiber_g: editing.macros.fiber_g ?? null },
          micros: { sodium_mg: editing.micros.sodium_mg, caffeine_mg: editing.micros.caffeine_mg ?? null },
        };
        const saved = await updateMeal(editing.id, built.body);
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
        if (draft) onDone();
      }
      onSaved();
    });
  }

  const heading = editing ? 'Edit meal' : draft?.mode === 'copy' ? 'Log a copy' : 'Log a meal';
  return (
    <form ref={formRef} className="meal-form" onSubmit={submit} noValidate aria-labelledby="meal-form-title" data-testid="meal-form">
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

      <fieldset className="foods">
        <legend>Foods</legend>
        {errors.foods ? (
          <p className="field__error" role="alert">
            {errors.foods}
          </p>
        ) : null}
        {state.foods.length === 0 ? <p className="field__hint">Optional. Calories of foods add up when the meal’s calories are left blank.</p> : null}
        {state.foods.length ? (
          <p className="foods__row foods__header" aria-hidden="true">
            <span>Food</span>
            <span>Calories (kcal)</span>
          </p>
        ) : null}
        <ol className="foods__list">
          {state.foods.map((f, i) => (
            <li key={f.key} className="foods__row">
              <Field label={`Food ${i + 1}`} error={errors[`foods.${i}.name`]} className="foods__name" hideLabel>
                {({ id, describedBy, invalid }) => (
                  <input id={id} type="text" value={f.name} onChange={(e) => setFood(f.key, { name: e.target.value })} aria-describedby={describedBy} aria-invalid={invalid} autoComplete="off" />
                )}
              </Field>
              <Field label={`Food ${i + 1} calories (kcal)`} error={errors[`foods.${i}.calories`]} className="foods__cal" hideLabel>
                {({ id, describedBy, invalid }) => (
                  <input id={id} type="text" inputMode="decimal" value={f.calories} onChange={(e) => setFood(f.key, { calories: e.target.value })} aria-describedby={describedBy} aria-invalid={invalid} autoComplete="off" />
                )}
              </Field>
              <button type="button" className="icon-btn" aria-label={`Remove food ${i + 1}`} onClick={() => update({ foods: state.foods.filter((x) => x.key !== f.key) })}>
                <Icon name="close" />
              </button>
            </li>
          ))}
        </ol>
        <button type="button" className="btn btn--ghost btn--small" onClick={() => update({ foods: [...state.foods, { key: ++foodKey, name: '', calories: '' }] })}>
          <Icon name="log" size={15} /> Add food
        </button>
      </fieldset>

      <fieldset className="nutrients">
        <legend>Nutrition</legend>
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
                  placeholder={f.name === 'macros.calories' && foodSum > 0 ? `${foodSum} from foods` : undefined}
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
      </div>
    </form>
  );
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
