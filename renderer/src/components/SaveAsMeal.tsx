import { useEffect, useId, useRef, useState, type KeyboardEvent } from 'react';
import { errorMessage, idempotencyKey } from '../api/client';
import { createSavedMeal } from '../api/saved-meals';
import type { MealType, SavedMealInput } from '../api/types';
import { useApp } from '../lib/app';
import { amountOf, entryInput, isBlank, parseAmount, type Entry } from '../lib/foods';
import { emitSavedMealsChanged } from '../lib/saved-meals';
import './SaveAsMeal.css';

/**
 * "Save as a meal": the foods being built, under a name, as a saved meal (`POST
 * /v1/nutrition/saved_meals`) that the Log screen logs again in one click. The name is asked for
 * inline (Enter saves, Escape cancels) since a form cannot nest inside the meal form.
 */
export function SaveAsMeal({ entries, mealType, defaultName }: { entries: Entry[]; mealType: MealType; defaultName: string }) {
  const app = useApp();
  const id = useId();
  const [open, setOpen] = useState(false);
  const [name, setName] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const inputRef = useRef<HTMLInputElement>(null);
  const openerRef = useRef<HTMLButtonElement>(null);
  const foods = entries.filter((e) => !isBlank(e));

  useEffect(() => {
    if (open) inputRef.current?.select();
  }, [open]);

  function close() {
    setOpen(false);
    setError(null);
    requestAnimationFrame(() => openerRef.current?.focus());
  }

  async function save() {
    if (!name.trim()) {
      setError('Give the meal a name.');
      return;
    }
    if (foods.some((e) => (e.kind === 'free' ? parseAmount(e.calories) : amountOf(e)) === null)) {
      setError('Every food needs its amount or calories first.');
      return;
    }
    const body: SavedMealInput = { name: name.trim(), meal_type: mealType, foods: foods.map(entryInput) };
    setBusy(true);
    try {
      const saved = await createSavedMeal(body, idempotencyKey());
      emitSavedMealsChanged();
      app.toast(`Saved “${saved.name}”: log it again in one click under Saved meals.`);
      close();
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  }

  function onKeyDown(e: KeyboardEvent) {
    if (e.key === 'Enter' && !e.ctrlKey && !e.metaKey) {
      e.preventDefault();
      void save();
    } else if (e.key === 'Escape') {
      e.preventDefault();
      close();
    }
  }

  if (!open) {
    return (
      <button
        ref={openerRef}
        type="button"
        className="btn btn--ghost save-as-meal__open"
        disabled={!foods.length}
        title={foods.length ? undefined : 'Add foods to save them as a meal'}
        onClick={() => {
          setName(defaultName);
          setOpen(true);
        }}
      >
        Save as a meal…
      </button>
    );
  }
  return (
    <div className="save-as-meal" role="group" aria-label="Save as a meal" onKeyDown={onKeyDown}>
      <label htmlFor={`${id}-name`} className="save-as-meal__label">
        Saved meal name
      </label>
      <input ref={inputRef} id={`${id}-name`} type="text" value={name} onChange={(e) => setName(e.target.value)} aria-invalid={Boolean(error)} aria-describedby={error ? `${id}-err` : undefined} autoComplete="off" placeholder="Usual breakfast" />
      <button type="button" className="btn btn--small btn--primary" disabled={busy} onClick={() => void save()}>
        Save
      </button>
      <button type="button" className="btn btn--small btn--ghost" onClick={close}>
        Cancel
      </button>
      {error ? (
        <p className="field__error save-as-meal__error" id={`${id}-err`} role="alert">
          {error}
        </p>
      ) : null}
    </div>
  );
}
