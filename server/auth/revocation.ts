import type { AppContext } from '../app-context.js';
import { revokedKeyIds } from '../db/api-keys.js';
import type { Principal } from './scopes.js';

/**
 * Long-lived connections (`/v1/events/stream`, MCP sessions and their notification streams)
 * authenticate once, when they open. A key revoked later must lose them too, within a second,
 * whether it was revoked through the API or by `chyme keys revoke` writing to the file from
 * another process (which this process hears of no other way). So while any such connection is
 * open, the keys behind them are looked up every REVOCATION_POLL_MS: one indexed query for a
 * handful of ids, and no timer at all while nothing is open.
 */
export const REVOCATION_POLL_MS = 250;

interface Watch {
  watchers: Map<string, Set<() => void>>;
  timer: ReturnType<typeof setInterval> | undefined;
}

const watches = new WeakMap<AppContext, Watch>();

function check(app: AppContext, watch: Watch): void {
  let revoked: string[];
  try {
    revoked = revokedKeyIds(app.db, [...watch.watchers.keys()]);
  } catch {
    return; // the database is being closed or swapped (a restore): the next tick looks again
  }
  for (const id of revoked) {
    const closers = watch.watchers.get(id);
    watch.watchers.delete(id);
    for (const close of closers ?? []) close();
  }
  if (watch.watchers.size === 0) stop(watch);
}

function stop(watch: Watch): void {
  clearInterval(watch.timer);
  watch.timer = undefined;
}

/**
 * Calls `close` once when the principal's key is revoked; the returned function stops watching
 * (call it when the connection ends on its own). A browser session is not a key: nothing to watch.
 */
export function onKeyRevoked(app: AppContext, principal: Principal, close: () => void): () => void {
  if (principal.kind !== 'api_key') return () => {};
  let watch = watches.get(app);
  if (!watch) {
    watch = { watchers: new Map(), timer: undefined };
    watches.set(app, watch);
  }
  const w = watch;
  const closers = w.watchers.get(principal.id) ?? new Set();
  w.watchers.set(principal.id, closers);
  closers.add(close);
  if (!w.timer) {
    w.timer = setInterval(() => check(app, w), REVOCATION_POLL_MS);
    w.timer.unref();
  }
  return () => {
    closers.delete(close);
    if (closers.size === 0 && w.watchers.get(principal.id) === closers) w.watchers.delete(principal.id);
    if (w.watchers.size === 0) stop(w);
  };
}
