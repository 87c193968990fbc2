import { startTransition, useCallback, useEffect, useRef, useState } from 'react';
import { subscribe } from '../api/events';
import type { Meal, ServiceEvent } from '../api/types';
import { CoalescedLoads } from './loads';
import { withMealChange, type MealChange, type OnMealsChange } from './meals';
import { clock } from './time';

export interface Resource<T> {
  data: T | undefined;
  error: unknown;
  /**
   * Loads again, keeping the current data on screen meanwhile (after the load in flight, if there
   * is one: `CoalescedLoads`). Its answer renders in a transition: a screen rendered again for a
   * reload waits for what an action shows at once (its toast, the form's busy state) rather than
   * holding it back.
   */
  reload: () => void;
}

/** A resource loaded by `useResource`, which can also show a write's answer before its reload. */
export interface LoadedResource<T> extends Resource<T> {
  /**
   * Shows what the service has just answered (a meal it created, as it returned it) in the data
   * on screen at once, then reloads, so the service's own answer replaces it; a load already in
   * flight, started before the write, is not shown (`CoalescedLoads.invalidate`). Without data
   * yet, it only reloads. Called in a transition, it renders in that transition.
   */
  amend: (update: (data: T) => T) => void;
}

/**
 * Loads data with `loader` whenever `deps` change, aborting the previous load. Reloads keep the
 * previous data visible, so live refreshes never flash an empty screen.
 */
export function useResource<T>(loader: (signal: AbortSignal) => Promise<T>, deps: readonly unknown[]): LoadedResource<T> {
  const [shown, setShown] = useState<{ data?: T; error?: unknown }>({});
  const loaderRef = useRef(loader);
  loaderRef.current = loader;
  const loads = useRef<CoalescedLoads<T> | undefined>(undefined);

  useEffect(() => {
    const current = new CoalescedLoads<T>(
      (signal) => loaderRef.current(signal),
      (outcome, first) => {
        // An error keeps the data shown before it (the retry reloads); data clears the error.
        const next = (prev: { data?: T }) => ('data' in outcome ? { data: outcome.data } : { data: prev.data, error: outcome.error });
        if (first) setShown(next);
        else startTransition(() => setShown(next));
      },
    );
    loads.current = current;
    return () => current.stop();
  }, deps);

  const reload = useCallback(() => loads.current?.reload(), []);
  const amend = useCallback((update: (data: T) => T) => {
    setShown((prev) => ('data' in prev && prev.data !== undefined ? { ...prev, data: update(prev.data) } : prev));
    loads.current?.invalidate();
  }, []);
  return { data: shown.data, error: shown.error, reload, amend };
}

/**
 * The one handler of meal writes for a screen whose `resource` holds meals: a write's answer (the
 * meals created or saved, the ids deleted) shown at once through `amend`, then the reload; with no
 * answer, the reload. `inData` replaces the meals in the resource's data; `keep` says which meals
 * the screen lists. Stable: forms and lists (memo) take it.
 */
export function useMealChanges<T>(resource: LoadedResource<T>, inData: (data: T, update: (meals: readonly Meal[]) => Meal[]) => T, keep: (m: Meal) => boolean): OnMealsChange {
  const latest = useRef({ inData, keep });
  latest.current = { inData, keep };
  const { amend, reload } = resource;
  return useCallback(
    (change?: MealChange) => {
      if (!change) return reload();
      const { inData, keep } = latest.current;
      amend((data) => inData(data, (meals) => withMealChange(meals, change, keep)));
    },
    [amend, reload],
  );
}

/**
 * Runs `handler` when an event whose type matches one of `types` (exact, or a prefix ending in
 * ".") arrives on the live stream, batching bursts into one call. A stream (re)connect counts as a
 * match, since events may have been missed while disconnected.
 */
export function useServiceEvents(types: readonly string[], handler: (ev: ServiceEvent) => void, delayMs = 150): void {
  const handlerRef = useRef(handler);
  handlerRef.current = handler;
  const key = types.join(',');
  useEffect(() => {
    const wanted = key.split(',');
    let timer: ReturnType<typeof setTimeout> | undefined;
    let pending: ServiceEvent | undefined;
    const unsubscribe = subscribe((ev) => {
      const match =
        ev.type === 'stream.opened' || wanted.some((t) => (t.endsWith('.') ? ev.type.startsWith(t) : ev.type === t));
      if (!match) return;
      pending = ev;
      if (timer === undefined) {
        timer = setTimeout(() => {
          timer = undefined;
          if (pending) handlerRef.current(pending);
        }, delayMs);
      }
    });
    return () => {
      unsubscribe();
      if (timer !== undefined) clearTimeout(timer);
    };
  }, [key, delayMs]);
}

/** The service's "now", re-rendering every `everyMs` (aligned to the wall-clock boundary). */
export function useNow(everyMs = 60_000): number {
  const [now, setNow] = useState(() => clock.now());
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout>;
    const schedule = () => {
      const wait = everyMs - (Date.now() % everyMs) + 20;
      timer = setTimeout(() => {
        setNow(clock.now());
        schedule();
      }, wait);
    };
    schedule();
    const off = clock.onChange(() => setNow(clock.now()));
    return () => {
      clearTimeout(timer);
      off();
    };
  }, [everyMs]);
  return now;
}

/** State persisted in localStorage (UI preferences that belong to this device, not the data). */
export function useStoredState<T>(key: string, initial: T): [T, (v: T | ((prev: T) => T)) => void] {
  const [value, setValue] = useState<T>(() => readStored(key, initial));
  const set = useCallback(
    (v: T | ((prev: T) => T)) => {
      setValue((prev) => {
        const next = typeof v === 'function' ? (v as (p: T) => T)(prev) : v;
        try {
          localStorage.setItem(key, JSON.stringify(next));
        } catch {
          /* storage full or disabled: keep it in memory */
        }
        return next;
      });
    },
    [key],
  );
  return [value, set];
}

export function readStored<T>(key: string, fallback: T): T {
  try {
    const raw = localStorage.getItem(key);
    return raw === null ? fallback : (JSON.parse(raw) as T);
  } catch {
    return fallback;
  }
}
