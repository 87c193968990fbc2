import { useEffect, useId, useRef, useState, type KeyboardEvent } from 'react';
import { errorMessage } from '../api/client';
import { deleteFood } from '../api/foods';
import type { NutritionFood } from '../api/types';
import { useApp } from '../lib/app';
import {
  amountOf,
  amountWithUnit,
  entryFromFood,
  entryGrams,
  entryNutrients,
  fmtNutrient,
  foodLabel,
  nextEntryKey,
  NUTRIENT_LABELS,
  TOTAL_KEYS,
  totalsOf,
  unknownUnitWord,
  type Entry,
  type TableEntry,
} from '../lib/foods';
import { fmtNumber } from '../lib/meals';
import { ConfirmButton } from './ConfirmButton';
import { CustomFoodDialog } from './CustomFoodDialog';
import { FoodSearch, focusSearch } from './FoodSearch';
import { FoodTableAbout } from './FoodTableAbout';
import { Field, Icon, type FieldErrors } from './ui';
import './MealFoods.css';

type SetEntries = (update: (entries: Entry[]) => Entry[]) => void;

/**
 * The foods of the meal being built: the type-ahead, the amount of the food just picked, the list
 * of entries (table foods with amount and unit, free-text ones with name and calories) and their
 * live totals. Keyboard: type, arrows, Enter picks; the amount is focused; Enter adds the entry and
 * focus returns to the search box.
 */
export function MealFoods({ entries, setEntries, errors, refreshKey }: { entries: Entry[]; setEntries: SetEntries; errors: FieldErrors; refreshKey: number }) {
  const app = useApp();
  const searchRef = useRef<HTMLInputElement>(null);
  const rootRef = useRef<HTMLFieldSetElement>(null);
  const [staged, setStaged] = useState<TableEntry | null>(null);
  const [stagedError, setStagedError] = useState<string | null>(null);
  // The custom-food dialog: a new food (its name as typed so far) or one of the person's own to edit.
  const [dialog, setDialog] = useState<{ name: string } | { food: NutritionFood } | null>(null);
  const [created, setCreated] = useState(0);
  const [announcement, setAnnouncement] = useState('');
  // Focus to move after the next render: the staged amount, or a new free-text entry's calories.
  const [focusNext, setFocusNext] = useState<string | null>(null);

  useEffect(() => {
    if (!focusNext) return;
    const el = rootRef.current?.querySelector<HTMLInputElement>(focusNext);
    if (el) {
      el.focus();
      el.select();
    }
    setFocusNext(null);
  }, [focusNext]);

  function stage(food: NutritionFood) {
    setStaged(entryFromFood(food));
    setStagedError(null);
    setFocusNext('[data-staged-amount]');
  }

  function addStaged() {
    if (!staged) return;
    const grams = entryGrams(staged);
    if (grams === null || grams <= 0) {
      const word = unknownUnitWord(staged);
      setStagedError(word ? `“${word}” is not a unit of this food: pick one from the list.` : 'Enter an amount above 0.');
      setFocusNext('[data-staged-amount]');
      return;
    }
    const kcal = entryNutrients(staged).calories;
    // The unit the whole text names, kept with the entry (its text stays as typed).
    const added = { ...staged, unit: amountOf(staged)!.unit };
    setEntries((list) => [...list, added]);
    setAnnouncement(`Added ${staged.name}, ${fmtNumber(grams)} g${kcal === null ? '' : `, ${fmtNumber(kcal)} kcal`}.`);
    setStaged(null);
    focusSearch(searchRef.current);
  }

  /** Deletes a food of the person's own; meals that used it keep their entries. */
  async function removeFood(food: NutritionFood) {
    try {
      await deleteFood(food.id);
      setStaged(null);
      setCreated((n) => n + 1);
      app.toast(`Deleted “${food.name}”. Meals that used it keep their numbers.`);
      focusSearch(searchRef.current);
    } catch (err) {
      app.toast(errorMessage(err), { tone: 'error' });
    }
  }

  function cancelStaged() {
    setStaged(null);
    focusSearch(searchRef.current);
  }

  function onStagedKey(e: KeyboardEvent) {
    // Enter in the amount or the unit adds the food; on a button it presses that button.
    const field = e.target instanceof HTMLInputElement || e.target instanceof HTMLSelectElement;
    if (e.key === 'Enter' && field && !e.ctrlKey && !e.metaKey) {
      e.preventDefault();
      addStaged();
    } else if (e.key === 'Escape') {
      e.preventDefault();
      cancelStaged();
    }
  }

  function addFree(name = '') {
    const key = nextEntryKey();
    setEntries((list) => [...list, { kind: 'free', key, name, calories: '' }]);
    setFocusNext(`[data-entry-key="${key}"] input[data-field="${name ? 'calories' : 'name'}"]`);
  }

  const update = (key: number, patch: Partial<Entry>) => setEntries((list) => list.map((e) => (e.key === key ? ({ ...e, ...patch } as Entry) : e)));
  const remove = (e: Entry, label: string) => {
    setEntries((list) => list.filter((x) => x.key !== e.key));
    setAnnouncement(`Removed ${label}.`);
    focusSearch(searchRef.current);
  };

  return (
    <fieldset className="foods" ref={rootRef}>
      <legend>Foods</legend>
      {errors.foods ? (
        <p className="field__error" role="alert">
          {errors.foods}
        </p>
      ) : null}
      <FoodSearch inputRef={searchRef} refreshKey={refreshKey + created} onPick={stage} onCreate={(name) => setDialog({ name })} onFreeText={addFree} />

      {staged ? (
        <StagedFood
          entry={staged}
          error={stagedError}
          onChange={(patch) => setStaged((s) => s && { ...s, ...patch })}
          onKeyDown={onStagedKey}
          onAdd={addStaged}
          onCancel={cancelStaged}
          onEdit={staged.food?.source === 'custom' ? () => setDialog({ food: staged.food! }) : undefined}
          onDelete={staged.food?.source === 'custom' ? () => void removeFood(staged.food!) : undefined}
        />
      ) : null}

      {entries.length ? (
        <ol className="foods__list meal-foods__list" aria-label="Foods in this meal">
          {entries.map((e, i) =>
            e.kind === 'free' ? (
              <li key={e.key} className="foods__row meal-foods__free" data-entry-key={e.key}>
                <Field label={`Food ${i + 1}`} error={errors[`foods.${i}.name`]} className="foods__name" hideLabel>
                  {({ id, describedBy, invalid }) => (
                    <input id={id} type="text" data-field="name" value={e.name} placeholder="Food" onChange={(ev) => update(e.key, { name: ev.target.value })} aria-describedby={describedBy} aria-invalid={invalid} autoComplete="off" />
                  )}
                </Field>
                <Field label={`Food ${i + 1} calories (kcal)`} error={errors[`foods.${i}.calories`]} className="foods__cal" hideLabel>
                  {({ id, describedBy, invalid }) => (
                    <div className="meal-foods__unit-input">
                      <input id={id} type="text" inputMode="decimal" data-field="calories" value={e.calories} onChange={(ev) => update(e.key, { calories: ev.target.value })} aria-describedby={describedBy} aria-invalid={invalid} autoComplete="off" />
                      <span aria-hidden="true">kcal</span>
                    </div>
                  )}
                </Field>
                <button type="button" className="icon-btn" aria-label={`Remove food ${i + 1}`} onClick={() => remove(e, e.name || `food ${i + 1}`)}>
                  <Icon name="close" />
                </button>
              </li>
            ) : (
              <TableRow key={e.key} entry={e} index={i} errors={errors} onChange={(patch) => update(e.key, patch)} onRemove={() => remove(e, e.name)} />
            ),
          )}
        </ol>
      ) : (
        <p className="field__hint">Foods you add are weighed against the food table; their nutrients add up below.</p>
      )}

      <div className="meal-foods__tools">
        <button type="button" className="btn btn--ghost btn--small" onClick={() => addFree()}>
          <Icon name="log" size={15} /> Add food by calories
        </button>
        <button type="button" className="btn btn--ghost btn--small" onClick={() => setDialog({ name: '' })}>
          <Icon name="edit" size={15} /> New food of your own…
        </button>
      </div>

      {entries.length ? <Totals entries={entries} /> : null}
      <p className="visually-hidden" role="status" aria-live="polite">
        {announcement}
      </p>
      <FoodTableAbout />

      {dialog ? (
        <CustomFoodDialog
          {...dialog}
          onClose={() => {
            setDialog(null);
            if (staged) setFocusNext('[data-staged-amount]');
            else focusSearch(searchRef.current);
          }}
          onSaved={(food) => {
            setDialog(null);
            setCreated((n) => n + 1);
            // An edited food stays picked with the amount typed, when its unit still exists.
            const next = entryFromFood(food);
            setStaged(staged && 'food' in dialog && next.units.some((u) => u.id === staged.unit) ? { ...next, quantity: staged.quantity, unit: staged.unit } : next);
            setStagedError(null);
            setFocusNext('[data-staged-amount]');
          }}
        />
      ) : null}
    </fieldset>
  );
}

/** The food just picked: its amount and unit, and what that comes to, before it joins the meal. */
function StagedFood(props: {
  entry: TableEntry;
  error: string | null;
  onChange: (patch: Partial<TableEntry>) => void;
  onKeyDown: (e: KeyboardEvent) => void;
  onAdd: () => void;
  onCancel: () => void;
  /** For a food of the person's own: edit it, delete it. */
  onEdit: (() => void) | undefined;
  onDelete: (() => void) | undefined;
}) {
  const e = props.entry;
  const n = entryNutrients(e);
  const grams = entryGrams(e);
  const tipId = `${useId()}-tip`;
  return (
    <div className="meal-foods__staged" role="group" aria-label={`Amount of ${e.name}`} onKeyDown={props.onKeyDown} data-testid="staged-food">
      <p className="meal-foods__staged-name">
        {foodLabel(e)}
        <span className="muted small" id={tipId}>
          {' '}
          · Enter adds it, Escape goes back; “60 g” or “2 slices” sets the unit too
        </span>
      </p>
      <div className="meal-foods__amount">
        <AmountFields entry={e} amountLabel="Amount" unitLabel="Unit" error={props.error ?? undefined} describedBy={tipId} staged onChange={props.onChange} />
        <div className="meal-foods__staged-actions">
          <button type="button" className="btn btn--primary btn--small" onClick={props.onAdd}>
            Add
          </button>
          <button type="button" className="btn btn--ghost btn--small" onClick={props.onCancel}>
            Cancel
          </button>
        </div>
      </div>
      {props.onEdit && props.onDelete ? (
        <div className="meal-foods__own">
          <span className="muted small">A food of your own:</span>
          <button type="button" className="btn btn--small btn--ghost" onClick={props.onEdit}>
            Edit food…
          </button>
          <ConfirmButton label="Delete food" confirmLabel={`Delete ${e.name}`} onConfirm={props.onDelete} />
        </div>
      ) : null}
      <p className="meal-foods__preview" data-testid="staged-preview">
        {grams === null ? (
          'Enter an amount.'
        ) : (
          <>
            <strong>{fmtNumber(grams, 1)} g</strong>
            {TOTAL_KEYS.map((k) => (
              <span key={k}>
                {NUTRIENT_LABELS[k].label} {n[k] === null ? 'unknown' : `${fmtNutrient(k, n[k]!)} ${NUTRIENT_LABELS[k].unit}`}
              </span>
            ))}
          </>
        )}
      </p>
    </div>
  );
}

function TableRow(props: { entry: TableEntry; index: number; errors: FieldErrors; onChange: (patch: Partial<TableEntry>) => void; onRemove: () => void }) {
  const e = props.entry;
  const grams = entryGrams(e);
  const kcal = entryNutrients(e).calories;
  const i = props.index;
  const err = props.errors[`foods.${i}.quantity`] ?? props.errors[`foods.${i}.unit`] ?? props.errors[`foods.${i}.food_id`] ?? props.errors[`foods.${i}`];
  return (
    <li className="meal-foods__row" data-entry-key={e.key} data-testid="food-entry">
      <span className="meal-foods__name" id={`entry-${e.key}-name`}>
        {e.name}
        {e.brand ? <span className="muted"> · {e.brand}</span> : null}
      </span>
      <AmountFields entry={e} amountLabel={`Amount of ${e.name}`} unitLabel={`Unit of ${e.name}`} error={err} hideLabels onChange={props.onChange} />
      <span className="meal-foods__kcal">
        {grams === null ? '—' : `${fmtNumber(grams)} g`}
        <strong>{kcal === null ? '? kcal' : `${fmtNumber(kcal)} kcal`}</strong>
      </span>
      <button type="button" className="icon-btn" aria-label={`Remove ${e.name}`} onClick={props.onRemove}>
        <Icon name="close" />
      </button>
    </li>
  );
}

/** How long typing in an amount must pause before the unit it names is kept as the entry's unit. */
const UNIT_PAUSE_MS = 600;
const AMOUNT_NUMBER = /\d+(?:[.,]\d*)?/;

/**
 * The amount of a table food and its unit. The amount may name its unit too ("60 g", "2 slices"):
 * the unit shown, the numbers and what is logged all follow the whole text as it stands.
 */
function AmountFields(props: {
  entry: TableEntry;
  amountLabel: string;
  unitLabel: string;
  error: string | undefined;
  hideLabels?: boolean;
  /** Ids of more text describing the amount. */
  describedBy?: string;
  /** The amount of the food just picked (focused when it is picked). */
  staged?: boolean;
  onChange: (patch: Partial<TableEntry>) => void;
}) {
  const e = props.entry;
  const { onChange } = props;
  // The latest text, for the pause timer; the unit it names is kept once typing pauses, the field
  // is left or Enter is pressed (the text itself is never rewritten, so typing on is never lost).
  const latest = useRef(e);
  latest.current = e;
  const pause = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const settle = () => {
    clearTimeout(pause.current);
    const named = amountWithUnit(latest.current.quantity, latest.current.units);
    if (named && named.unit !== latest.current.unit) onChange({ unit: named.unit });
  };
  useEffect(() => () => clearTimeout(pause.current), []);
  const shown = amountOf(e)?.unit ?? e.unit;
  return (
    <>
      <Field label={props.amountLabel} error={props.error} className="meal-foods__qty" hideLabel={props.hideLabels}>
        {({ id, describedBy, invalid }) => (
          <input
            id={id}
            type="text"
            value={e.quantity}
            data-staged-amount={props.staged ? '' : undefined}
            onChange={(ev) => {
              onChange({ quantity: ev.target.value });
              clearTimeout(pause.current);
              pause.current = setTimeout(settle, UNIT_PAUSE_MS);
            }}
            onKeyDown={(ev) => {
              if (ev.key === 'Enter') settle();
            }}
            onBlur={settle}
            aria-describedby={[describedBy, props.describedBy].filter(Boolean).join(' ') || undefined}
            aria-invalid={invalid}
            autoComplete="off"
          />
        )}
      </Field>
      <Field label={props.unitLabel} className="meal-foods__unit" hideLabel={props.hideLabels}>
        {({ id }) => (
          <select
            id={id}
            value={shown}
            // A unit picked here wins over one named in the text, which keeps only its number.
            onChange={(ev) => onChange(amountWithUnit(e.quantity, e.units) ? { unit: ev.target.value, quantity: AMOUNT_NUMBER.exec(e.quantity)?.[0] ?? e.quantity } : { unit: ev.target.value })}
          >
            {e.units.map((u) => (
              <option key={u.id} value={u.id}>
                {u.label}
              </option>
            ))}
          </select>
        )}
      </Field>
    </>
  );
}

/** Live totals of the meal being built. A total some food does not know is marked as "at least". */
function Totals({ entries }: { entries: Entry[] }) {
  const t = totalsOf(entries);
  const partial = TOTAL_KEYS.some((k) => t.partial.has(k) && t.known.has(k));
  return (
    <div className="meal-totals" data-testid="meal-totals">
      <h3 className="meal-totals__title">This meal</h3>
      <dl className="meal-totals__list">
        {TOTAL_KEYS.map((k) => (
          <div key={k} className={`meal-totals__item meal-totals__item--${k}`} data-nutrient={k}>
            <dt>{NUTRIENT_LABELS[k].label}</dt>
            <dd>
              {!t.known.has(k) ? (
                '—'
              ) : (
                <>
                  {t.partial.has(k) ? <span title="Not known for every food">≥ </span> : null}
                  {fmtNutrient(k, t.values[k])}
                  <span className="meal-totals__unit"> {NUTRIENT_LABELS[k].unit}</span>
                </>
              )}
            </dd>
          </div>
        ))}
      </dl>
      {partial ? <p className="field__hint">≥: not every food knows this nutrient, so the total is at least this.</p> : null}
    </div>
  );
}
