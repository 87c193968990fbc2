/**
 * A value outside React's state that components read with `useSyncExternalStore`: a change
 * re-renders only the components that read it (the toaster, not the screen under it).
 */
export interface Store<T> {
  get(): T;
  subscribe(listener: () => void): () => void;
  /** Sets the value to `next(current)`; listeners hear of it only when it changed. */
  update(next: (current: T) => T): void;
}

export function createStore<T>(initial: T): Store<T> {
  let current = initial;
  const listeners = new Set<() => void>();
  return {
    get: () => current,
    subscribe(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    update(next) {
      const value = next(current);
      if (Object.is(value, current)) return;
      current = value;
      for (const listener of listeners) listener();
    },
  };
}
