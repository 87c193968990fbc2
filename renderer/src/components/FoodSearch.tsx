import { useEffect, useId, useRef, useState, type KeyboardEvent, type RefObject } from 'react';
import { errorMessage } from '../api/client';
import { searchFoods } from '../api/foods';
import type { NutritionFood } from '../api/types';
import { fmtNumber } from '../lib/meals';
import './FoodSearch.css';

/** How long typing must pause before a search is sent: fast enough to feel instant, slow enough to skip keystrokes. */
const DEBOUNCE_MS = 120;
const LIMIT = 8;

type Option =
  | { kind: 'food'; food: NutritionFood }
  | { kind: 'create'; name: string }
  | { kind: 'free'; name: string };

/** Inputs focused by the form itself (after adding a food): they stay closed until the person types or presses a key. */
const quietFocus = new WeakSet<HTMLInputElement>();

/** Moves focus back to the search box without opening its list over what was just added. */
export function focusSearch(input: HTMLInputElement | null): void {
  if (!input) return;
  quietFocus.add(input);
  input.focus();
}

interface Results {
  query: string;
  foods: NutritionFood[];
}

/**
 * The type-ahead of the meal form: an ARIA 1.2 combobox whose listbox offers the person's recent and
 * frequent foods before anything is typed, then ranked matches from `GET /v1/foods` as they type
 * (debounced; a newer keystroke aborts the request before it). Arrows move, Enter picks, Escape
 * closes then clears. Enter with nothing to pick falls through to the form (logs the meal).
 */
export function FoodSearch(props: {
  inputRef: RefObject<HTMLInputElement | null>;
  /** Changes when the person's foods change (a meal logged, a food created): recents reload. */
  refreshKey: number;
  onPick: (food: NutritionFood) => void;
  onCreate: (name: string) => void;
  onFreeText: (name: string) => void;
}) {
  const id = useId();
  const listId = `${id}-list`;
  const [query, setQuery] = useState('');
  const [open, setOpen] = useState(false);
  const [results, setResults] = useState<Results | null>(null);
  const [active, setActive] = useState(-1);
  const [error, setError] = useState<string | null>(null);
  // Enter pressed before the results for what is typed arrived: pick the first when they do.
  const pendingPick = useRef(false);
  const cache = useRef(new Map<string, NutritionFood[]>());
  const q = query.trim();

  useEffect(() => {
    cache.current.clear();
  }, [props.refreshKey]);

  useEffect(() => {
    if (!open && !q) return;
    const cached = cache.current.get(q);
    if (cached) {
      show({ query: q, foods: cached });
      return;
    }
    const ctrl = new AbortController();
    const timer = setTimeout(
      () => {
        searchFoods(q, LIMIT, ctrl.signal)
          .then((list) => {
            if (ctrl.signal.aborted) return;
            cache.current.set(q, list.data);
            setError(null);
            show({ query: q, foods: list.data });
          })
          .catch((err: unknown) => {
            if (ctrl.signal.aborted || (err as Error)?.name === 'AbortError') return;
            pendingPick.current = false;
            setError(errorMessage(err));
          });
      },
      q ? DEBOUNCE_MS : 0,
    );
    return () => {
      clearTimeout(timer);
      ctrl.abort();
    };
  }, [q, open, props.refreshKey]);

  function show(r: Results) {
    setResults(r);
    setActive(r.query && r.foods.length ? 0 : -1);
    if (pendingPick.current) {
      pendingPick.current = false;
      const food = r.foods[0];
      if (food) pick({ kind: 'food', food });
      else if (r.query) pick({ kind: 'free', name: r.query });
    }
  }

  const current = results && results.query === q ? results : null;
  const options: Option[] = [...(current?.foods ?? results?.foods ?? []).map((food) => ({ kind: 'food' as const, food }))];
  if (q) options.push({ kind: 'create', name: q }, { kind: 'free', name: q });
  const expanded = open && (options.length > 0 || Boolean(error));

  function pick(o: Option) {
    setQuery('');
    setResults(null);
    setActive(-1);
    setOpen(false);
    if (o.kind === 'food') props.onPick(o.food);
    else if (o.kind === 'create') props.onCreate(o.name);
    else props.onFreeText(o.name);
  }

  function onKeyDown(e: KeyboardEvent<HTMLInputElement>) {
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      if (!open) {
        setOpen(true);
        return;
      }
      if (!options.length) return;
      const step = e.key === 'ArrowDown' ? 1 : -1;
      setActive((a) => (a < 0 ? (step > 0 ? 0 : options.length - 1) : (a + step + options.length) % options.length));
    } else if (e.key === 'Enter' && !e.ctrlKey && !e.metaKey) {
      const chosen = active >= 0 && expanded && (current || !q) ? options[active] : undefined;
      if (chosen) {
        e.preventDefault();
        pick(chosen);
      } else if (q) {
        // Typed faster than the search answered: take the first match when it arrives.
        e.preventDefault();
        pendingPick.current = true;
        setOpen(true);
      }
      // Nothing typed and nothing chosen: Enter submits the meal form as in any text field.
    } else if (e.key === 'Escape') {
      if (expanded) {
        e.preventDefault();
        setOpen(false);
        setActive(-1);
      } else if (query) {
        e.preventDefault();
        setQuery('');
      }
    } else if (e.key === 'Tab') {
      setOpen(false);
    }
  }

  const optionId = (i: number) => `${id}-opt-${i}`;
  useEffect(() => {
    if (expanded && active >= 0) document.getElementById(optionId(active))?.scrollIntoView({ block: 'nearest' });
  }, [active, expanded]);
  const heading = q ? `Foods matching “${q}”` : 'Your recent and frequent foods';
  const status = error
    ? error
    : !open
      ? ''
      : current
        ? current.foods.length
          ? `${current.foods.length} ${current.foods.length === 1 ? 'food' : 'foods'}${q ? ' found' : ' you log often'}. Arrows to choose, Enter to pick.`
          : q
            ? `No food matches “${q}”.`
            : 'No recent foods yet: type to search the food table.'
        : q
          ? 'Searching…'
          : '';

  return (
    <div className="food-search">
      <label htmlFor={`${id}-input`} className="food-search__label">
        Add a food
      </label>
      <div className="food-search__box">
        <input
          ref={props.inputRef}
          id={`${id}-input`}
          type="text"
          role="combobox"
          aria-expanded={expanded}
          aria-controls={listId}
          aria-autocomplete="list"
          aria-activedescendant={expanded && active >= 0 ? optionId(active) : undefined}
          aria-describedby={`${id}-hint`}
          value={query}
          placeholder="Search foods: banana, oats, chicken breast…"
          autoComplete="off"
          spellCheck={false}
          onChange={(e) => {
            setQuery(e.target.value);
            setActive(-1);
            setOpen(true);
          }}
          onFocus={(e) => {
            if (quietFocus.delete(e.currentTarget)) return;
            setOpen(true);
          }}
          onClick={() => setOpen(true)}
          onBlur={() => setOpen(false)}
          onKeyDown={onKeyDown}
          data-testid="food-search"
        />
        <div className="food-search__popup" hidden={!expanded}>
          {!q && options.length ? (
            <p className="food-search__group" aria-hidden="true">
              Recent and frequent
            </p>
          ) : null}
          <ul id={listId} role="listbox" aria-label={heading} aria-busy={Boolean(q) && !current} className="food-search__list" data-testid="food-options">
            {expanded
              ? options.map((o, i) => (
                  <li
                    key={o.kind === 'food' ? o.food.id : o.kind}
                    id={optionId(i)}
                    role="option"
                    aria-selected={i === active}
                    className={`food-search__opt food-search__opt--${o.kind} ${i === active ? 'is-active' : ''}`}
                    // Keep focus in the input: a click picks without blurring it first.
                    onMouseDown={(e) => e.preventDefault()}
                    onMouseMove={() => setActive(i)}
                    onClick={() => pick(o)}
                  >
                    <OptionBody option={o} />
                  </li>
                ))
              : null}
          </ul>
        </div>
      </div>
      <p id={`${id}-hint`} className="field__hint">
        Type to search, arrows to choose, Enter to pick; Enter in an empty box logs the meal.
      </p>
      <p className="visually-hidden" role="status" aria-live="polite">
        {status}
      </p>
      {error ? <p className="field__error">{error}</p> : null}
    </div>
  );
}

function OptionBody({ option }: { option: Option }) {
  if (option.kind === 'create') {
    return (
      <span className="food-search__name">
        Create “{option.name}” as your own food…
      </span>
    );
  }
  if (option.kind === 'free') {
    return (
      <span className="food-search__name">
        Add “{option.name}” with calories only
      </span>
    );
  }
  const f = option.food;
  const portion = f.portions[0];
  return (
    <>
      <span className="food-search__name">
        {f.name}
        {f.brand ? <span className="food-search__brand"> · {f.brand}</span> : null}
        {f.source === 'custom' ? <span className="food-search__tag">Yours</span> : null}
      </span>
      <span className="food-search__meta">
        {f.nutrients.calories === null ? 'kcal unknown' : `${fmtNumber(f.nutrients.calories)} kcal per 100 g`}
        {portion ? ` · ${portion.label} = ${fmtNumber(portion.grams, 1)} g` : ''}
        {f.usage.count ? ` · logged ${f.usage.count}×` : ''}
      </span>
    </>
  );
}
