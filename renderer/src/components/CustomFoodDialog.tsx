import { useEffect, useRef, useState, type FormEvent } from 'react';
import { createPortal } from 'react-dom';
import { idempotencyKey } from '../api/client';
import { createFood, updateFood } from '../api/foods';
import type { FoodInput, NutrientKey, NutritionFood } from '../api/types';
import { useApp } from '../lib/app';
import { NUTRIENT_KEYS, NUTRIENT_LABELS, nextEntryKey, parseAmount } from '../lib/foods';
import { Field, FormError, Icon, Segmented, useApiForm, type FieldErrors } from './ui';
import './CustomFoodDialog.css';

type Basis = 'per_100g' | 'per_serving';

interface PortionRow {
  key: number;
  label: string;
  grams: string;
}

/**
 * A food of the person's own (a recipe, a packaged product): created with `POST /v1/foods`, or
 * edited with `PATCH /v1/foods/{id}` when `food` is given: name, brand, nutrients per 100 g or per
 * serving (the label on a packet), and portions. A modal dialog (focus stays inside, Escape
 * closes), rendered outside the meal form so its form does not nest in the meal's.
 */
export function CustomFoodDialog({ name: initialName = '', food, onClose, onSaved }: { name?: string; food?: NutritionFood; onClose: () => void; onSaved: (food: NutritionFood) => void }) {
  const app = useApp();
  const dialogRef = useRef<HTMLDialogElement>(null);
  const [name, setName] = useState(food?.name ?? initialName);
  const [brand, setBrand] = useState(food?.brand ?? '');
  const [basis, setBasis] = useState<Basis>('per_100g');
  const [servingGrams, setServingGrams] = useState('');
  const [servingLabel, setServingLabel] = useState('');
  const [numbers, setNumbers] = useState<Record<NutrientKey, string>>(
    () => Object.fromEntries(NUTRIENT_KEYS.map((k) => [k, food?.nutrients[k] === null || food?.nutrients[k] === undefined ? '' : String(food.nutrients[k])])) as Record<NutrientKey, string>,
  );
  const [portions, setPortions] = useState<PortionRow[]>(() => (food?.portions ?? []).map((p) => ({ key: nextEntryKey(), label: p.label, grams: String(p.grams) })));
  const { errors, setErrors, busy, send } = useApiForm((p) => /^(name|brand|nutrients\.|per_serving\.|portions\.)/.test(p));
  const attempt = useRef<{ json: string; key: string } | null>(null);

  useEffect(() => {
    const d = dialogRef.current;
    if (d && !d.open) d.showModal();
    return () => d?.close();
  }, []);

  useEffect(() => {
    if (Object.keys(errors).some((k) => k !== '')) dialogRef.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus();
  }, [errors]);

  const nutrientParam = (k: NutrientKey) => (basis === 'per_serving' ? `per_serving.nutrients.${k}` : `nutrients.${k}`);

  function build(): { body: FoodInput } | { errors: FieldErrors } {
    const errs: FieldErrors = {};
    if (!name.trim()) errs.name = 'Give the food a name.';
    const nutrients: Partial<Record<NutrientKey, number | null>> = {};
    for (const k of NUTRIENT_KEYS) {
      const raw = numbers[k].trim();
      // Blank is unknown: left out of a new food, cleared (null) on an edit.
      if (!raw) {
        if (food && k !== 'calories') nutrients[k] = null;
        continue;
      }
      const v = parseAmount(raw);
      if (v === null || v < 0) errs[nutrientParam(k)] = 'Enter a number, 0 or more.';
      else nutrients[k] = v;
    }
    if (nutrients.calories === undefined && !errs[nutrientParam('calories')]) errs[nutrientParam('calories')] = 'Enter the calories.';
    const body: FoodInput = { name: name.trim() };
    if (brand.trim()) body.brand = brand.trim();
    else if (food?.brand) body.brand = null;
    const rows: { label: string; grams: number }[] = [];
    if (basis === 'per_serving') {
      const g = parseAmount(servingGrams);
      if (g === null || g <= 0) errs['per_serving.grams'] = 'Enter the serving’s weight in grams.';
      else {
        body.per_serving = { grams: g, nutrients: { ...nutrients, calories: nutrients.calories ?? 0 } };
        // The serving is also how the person will most often log it.
        rows.push({ label: servingLabel.trim() || '1 serving', grams: g });
      }
    } else {
      body.nutrients = { ...nutrients, calories: nutrients.calories ?? 0 };
    }
    for (const p of portions) {
      if (!p.label.trim() && !p.grams.trim()) continue;
      const g = parseAmount(p.grams);
      const at = rows.length;
      if (!p.label.trim()) errs[`portions.${at}.label`] = 'Name the portion (1 slice, 1 bar).';
      if (g === null || g <= 0) errs[`portions.${at}.grams`] = 'Enter its weight in grams.';
      rows.push({ label: p.label.trim(), grams: g ?? 0 });
    }
    // An edit sends the whole list (it replaces the food's portions), even when emptied.
    if (rows.length || food) body.portions = rows;
    return Object.keys(errs).length ? { errors: errs } : { body };
  }

  async function submit(e: FormEvent) {
    e.preventDefault();
    // React events bubble along the component tree, through the portal, to the meal form.
    e.stopPropagation();
    const built = build();
    if ('errors' in built) {
      setErrors(built.errors);
      return;
    }
    setErrors({});
    await send(async () => {
      const json = JSON.stringify(built.body);
      if (attempt.current?.json !== json) attempt.current = { json, key: idempotencyKey() };
      const saved = food
        ? await updateFood(food.id, built.body)
        : await createFood(built.body, attempt.current.key);
      app.toast(food ? `Saved “${saved.name}”. Meals already logged keep their numbers.` : `Created “${saved.name}”. It is searched with the rest of the foods.`);
      onSaved(saved);
    });
  }

  // Portion rows are numbered after the serving (when given), as the API numbers `portions`.
  const firstRow = basis === 'per_serving' ? 1 : 0;
  return createPortal(
    <dialog
      ref={dialogRef}
      className="food-dialog"
      aria-labelledby="food-dialog-title"
      onCancel={(e) => {
        e.preventDefault();
        onClose();
      }}
      data-testid="custom-food-dialog"
    >
      <form className="food-dialog__form" onSubmit={submit} noValidate>
        <div className="food-dialog__head">
          <h2 id="food-dialog-title">{food ? `Edit ${food.name}` : 'A food of your own'}</h2>
          <button type="button" className="icon-btn" aria-label="Close" onClick={onClose}>
            <Icon name="close" />
          </button>
        </div>
        <FormError errors={errors} />
        <div className="grid grid--2">
          <Field label="Name" error={errors.name}>
            {({ id, describedBy, invalid }) => (
              <input id={id} type="text" value={name} onChange={(e) => setName(e.target.value)} aria-describedby={describedBy} aria-invalid={invalid} autoComplete="off" autoFocus placeholder="Granola bar" />
            )}
          </Field>
          <Field label="Brand (optional)" error={errors.brand}>
            {({ id, describedBy, invalid }) => (
              <input id={id} type="text" value={brand} onChange={(e) => setBrand(e.target.value)} aria-describedby={describedBy} aria-invalid={invalid} autoComplete="off" />
            )}
          </Field>
        </div>
        <Segmented
          label="Nutrients are given"
          value={basis}
          options={[
            { value: 'per_100g', label: 'Per 100 g' },
            { value: 'per_serving', label: 'Per serving' },
          ]}
          onChange={setBasis}
        />
        {basis === 'per_serving' ? (
          <div className="grid grid--2">
            <Field label="Serving size (g)" error={errors['per_serving.grams']} hint="The weight the packet’s numbers are for.">
              {({ id, describedBy, invalid }) => (
                <input id={id} type="text" inputMode="decimal" value={servingGrams} onChange={(e) => setServingGrams(e.target.value)} aria-describedby={describedBy} aria-invalid={invalid} autoComplete="off" />
              )}
            </Field>
            <Field label="Serving name (optional)" error={errors['portions.0.label']} hint="Kept as a portion, e.g. “1 bar”.">
              {({ id, describedBy, invalid }) => (
                <input id={id} type="text" value={servingLabel} onChange={(e) => setServingLabel(e.target.value)} aria-describedby={describedBy} aria-invalid={invalid} autoComplete="off" placeholder="1 serving" />
              )}
            </Field>
          </div>
        ) : null}
        <fieldset>
          <legend className="food-dialog__legend">Nutrients {basis === 'per_serving' ? 'per serving' : 'per 100 g'}</legend>
          <div className="grid grid--nutrients">
            {NUTRIENT_KEYS.map((k) => (
              <Field key={k} label={`${NUTRIENT_LABELS[k].label} (${NUTRIENT_LABELS[k].unit})`} error={errors[nutrientParam(k)]}>
                {({ id, describedBy, invalid }) => (
                  <input
                    id={id}
                    type="text"
                    inputMode="decimal"
                    value={numbers[k]}
                    onChange={(e) => setNumbers((n) => ({ ...n, [k]: e.target.value }))}
                    aria-describedby={describedBy}
                    aria-invalid={invalid}
                    autoComplete="off"
                    placeholder={k === 'calories' ? undefined : 'unknown'}
                  />
                )}
              </Field>
            ))}
          </div>
          <p className="field__hint">Leave a nutrient blank when the label does not give it: it is kept as unknown, not as 0.</p>
        </fieldset>
        <fieldset>
          <legend className="food-dialog__legend">Portions</legend>
          {portions.length ? (
            <ol className="food-dialog__portions">
              {portions.map((p, i) => (
                <li key={p.key}>
                  <Field label={`Portion ${i + 1} name`} error={errors[`portions.${firstRow + i}.label`]} hideLabel>
                    {({ id, describedBy, invalid }) => (
                      <input id={id} type="text" value={p.label} placeholder="1 slice" onChange={(e) => setPortions((list) => list.map((x) => (x.key === p.key ? { ...x, label: e.target.value } : x)))} aria-describedby={describedBy} aria-invalid={invalid} autoComplete="off" />
                    )}
                  </Field>
                  <Field label={`Portion ${i + 1} grams`} error={errors[`portions.${firstRow + i}.grams`]} hideLabel>
                    {({ id, describedBy, invalid }) => (
                      <div className="food-dialog__grams">
                        <input id={id} type="text" inputMode="decimal" value={p.grams} onChange={(e) => setPortions((list) => list.map((x) => (x.key === p.key ? { ...x, grams: e.target.value } : x)))} aria-describedby={describedBy} aria-invalid={invalid} autoComplete="off" />
                        <span aria-hidden="true">g</span>
                      </div>
                    )}
                  </Field>
                  <button type="button" className="icon-btn" aria-label={`Remove portion ${i + 1}`} onClick={() => setPortions((list) => list.filter((x) => x.key !== p.key))}>
                    <Icon name="close" />
                  </button>
                </li>
              ))}
            </ol>
          ) : (
            <p className="field__hint">Household measures with their weight (1 slice = 30 g) let you log it without a scale.</p>
          )}
          <button type="button" className="btn btn--ghost btn--small" onClick={() => setPortions((list) => [...list, { key: nextEntryKey(), label: '', grams: '' }])}>
            <Icon name="log" size={15} /> Add a portion
          </button>
        </fieldset>
        <div className="form-actions">
          <button type="submit" className="btn btn--primary" disabled={busy}>
            {food ? 'Save food' : 'Create food'}
          </button>
          <button type="button" className="btn btn--ghost" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </dialog>,
    document.body,
  );
}
