import './App.css';
import { lazy, startTransition, Suspense, useCallback, useEffect, useMemo, useRef, useState, useSyncExternalStore, type ReactNode, type RefObject } from 'react';
import { ApiError, onUnauthenticated } from './api/client';
import { onStatus, subscribe, type StreamStatus } from './api/events';
import { getSettings } from './api/settings';
import { createStore, type Store } from './lib/store';
import type { Settings } from './api/types';
import { ErrorNote, Icon, Loading } from './components/ui';
import { AppContext, startAfreshAfterRestore, type AppContextValue, type MealDraft, type Route, type ToastOptions } from './lib/app';
import { useNow, useServiceEvents, useStoredState } from './lib/hooks';
import { todayIn } from './lib/time';
import ImportScreen from './screens/Import';
import IntegrationsScreen from './screens/integrations/IntegrationsScreen';
import { LogScreen } from './screens/Log';
import TimelineScreen from './screens/Timeline';
import { TodayScreen } from './screens/Today';

// The Gut score screen carries the chart library (recharts, ~117 KB gzipped): it loads on its own,
// fetched in the background once Today is on screen, so the start stays small and the first visit
// does not wait for it. The other screens are small enough to ship in the main bundle.
const loadScoreScreen = () => import('./screens/Score');
const ScoreScreen = lazy(loadScoreScreen);

const ROUTES: { route: Route; label: string; icon: Parameters<typeof Icon>[0]['name'] }[] = [
  { route: 'today', label: 'Today', icon: 'today' },
  { route: 'log', label: 'Log meal', icon: 'log' },
  { route: 'score', label: 'Gut score', icon: 'score' },
  { route: 'timeline', label: 'Timeline', icon: 'timeline' },
  { route: 'import', label: 'Import', icon: 'upload' },
  { route: 'integrations', label: 'Integrations', icon: 'plug' },
];

/**
 * Which screens the app shows, and what of the service's live parts. The desktop shows them all;
 * the phone (renderer/src/phone/) shows Today, Log meal, Gut score, Timeline and its own
 * Integrations, and has no event stream.
 */
export interface AppVariant {
  screens: readonly Route[];
  /** What the Integrations screen holds instead of the desktop's cards. */
  integrations?: ReactNode;
  /** The live-updates badge (there is an event stream to report on). */
  live: boolean;
}

const DESKTOP: AppVariant = { screens: ROUTES.map((r) => r.route), live: true };

function parseHash(screens: readonly Route[]): { route: Route; params: URLSearchParams } {
  const [path = '', qs = ''] = location.hash.replace(/^#\/?/, '').split('?');
  const route = screens.find((r) => r === path) ?? 'today';
  return { route, params: new URLSearchParams(qs) };
}

type Theme = 'system' | 'light' | 'dark';

function ThemeToggle() {
  const [theme, setTheme] = useStoredState<Theme>('chyme.theme', 'system');
  useEffect(() => {
    if (theme === 'system') delete document.documentElement.dataset.theme;
    else document.documentElement.dataset.theme = theme;
  }, [theme]);
  const next: Record<Theme, Theme> = { system: 'light', light: 'dark', dark: 'system' };
  const label: Record<Theme, string> = { system: 'System theme', light: 'Light theme', dark: 'Dark theme' };
  const icon = theme === 'light' ? 'sun' : theme === 'dark' ? 'moon' : 'monitor';
  return (
    <button
      type="button"
      className="theme-toggle"
      onClick={() => setTheme(next[theme])}
      aria-label={`${label[theme]} (switch to ${label[next[theme]].toLowerCase()})`}
      data-testid="theme-toggle"
    >
      <Icon name={icon} />
      <span>{label[theme]}</span>
    </button>
  );
}

function LiveBadge() {
  const [status, setStatus] = useState<StreamStatus>('connecting');
  useEffect(() => onStatus(setStatus), []);
  const text = status === 'open' ? 'Live' : status === 'connecting' ? 'Connecting' : 'Offline';
  return (
    <span className={`live live--${status}`} role="status" title="Live updates from the service">
      <span className="live__dot" aria-hidden="true" />
      {text}
    </span>
  );
}

interface Toast {
  id: number;
  message: string;
  opts: ToastOptions;
}

let toastCount = 0;

/**
 * The toast showing, kept outside App's state (lib/store.ts): a toast re-renders the toaster alone,
 * not the screen under it (a logged meal's note is on screen without the Log screen rendering again).
 */
type ToastStore = Store<Toast | null>;

/** How long a toast stays: long enough to reach and use its action. Paused while it has focus or the pointer. */
const TOAST_MS = 5000;
const ACTION_TOAST_MS = 9000;

/** Focuses the first match of `selector` once it is on screen (the list reloads after an action), for up to 3 s. */
function focusWhenShown(selector: string, fallback: () => void): void {
  const until = Date.now() + 3000;
  const tick = () => {
    const el = document.querySelector<HTMLElement>(selector);
    if (el) return el.focus();
    if (Date.now() < until) setTimeout(tick, 50);
  };
  fallback();
  tick();
}

function Toaster({ store, onClose, mainRef }: { store: ToastStore; onClose: (id: number) => void; mainRef: RefObject<HTMLElement | null> }) {
  const toast = useSyncExternalStore(store.subscribe, store.get);
  const [busy, setBusy] = useState(false);
  // Hovered or focused: the toast stays until the person moves on (WCAG 2.2.1, timing adjustable).
  const [held, setHeld] = useState(false);
  const actionRef = useRef<HTMLButtonElement>(null);
  const boxRef = useRef<HTMLDivElement>(null);
  // Where focus was when the toast came: focus goes back there when the toast leaves while it holds focus.
  const originRef = useRef<Element | null>(null);

  useEffect(() => {
    if (!toast || held) return;
    const t = setTimeout(() => onClose(toast.id), toast.opts.action ? ACTION_TOAST_MS : TOAST_MS);
    return () => clearTimeout(t);
  }, [toast, held, onClose]);

  useEffect(() => {
    setHeld(false);
    if (!toast?.opts.action) return;
    const origin = toast.opts.origin ?? document.activeElement;
    originRef.current = origin;
    // The action took away the control that had focus (a deleted meal's row goes with its Delete
    // button): focus would drop to the page, far from Undo. It moves to the toast's action instead.
    const timer = setInterval(() => {
      const active = document.activeElement;
      if (origin && origin !== document.body && !origin.isConnected && (!active || active === document.body)) {
        clearInterval(timer);
        actionRef.current?.focus();
      }
    }, 50);
    return () => clearInterval(timer);
  }, [toast]);

  /** Before the toast (holding focus) goes: focus returns to where it was, else to the screen. */
  function leave(focus?: string) {
    const active = document.activeElement;
    // Focus is elsewhere on purpose: leave it. (In the toast, or dropped to the page because an
    // action's own toast replaced this one and its button: bring it back.)
    if (active && active !== document.body && !boxRef.current?.contains(active)) return;
    const origin = originRef.current;
    const back = () => (origin instanceof HTMLElement && origin.isConnected ? origin.focus() : mainRef.current?.focus());
    if (focus) focusWhenShown(focus, back);
    else back();
  }

  return (
    <div className="toaster" role="status" aria-live="polite">
      {toast ? (
        <div
          className={`toast toast--${toast.opts.tone ?? 'info'}`}
          key={toast.id}
          data-testid="toast"
          ref={boxRef}
          onFocus={() => setHeld(true)}
          onBlur={(e) => !e.currentTarget.contains(e.relatedTarget as Node | null) && setHeld(false)}
          onMouseEnter={() => setHeld(true)}
          onMouseLeave={() => setHeld(boxRef.current?.contains(document.activeElement) ?? false)}
        >
          <span>{toast.message}</span>
          {toast.opts.action ? (
            <button
              type="button"
              className="toast__action"
              ref={actionRef}
              disabled={busy}
              onClick={() => {
                setBusy(true);
                Promise.resolve(toast.opts.action!.run())
                  .catch(() => undefined)
                  .then((result) => {
                    setBusy(false);
                    leave(result ? result.focus : undefined);
                    onClose(toast.id);
                  });
              }}
            >
              {toast.opts.action.label}
            </button>
          ) : null}
          <button
            type="button"
            className="toast__close"
            onClick={() => {
              leave();
              onClose(toast.id);
            }}
            aria-label="Dismiss"
          >
            <Icon name="close" size={16} />
          </button>
        </div>
      ) : null}
    </div>
  );
}

function Gate({ title, children }: { title: string; children: ReactNode }) {
  return (
    <main className="gate" id="main">
      <div className="gate__card">
        <p className="brand brand--big">
          <span className="brand__mark" aria-hidden="true" />
          Chyme
        </p>
        <h1>{title}</h1>
        {children}
      </div>
    </main>
  );
}

export function App({ variant = DESKTOP }: { variant?: AppVariant }) {
  const routes = useMemo(() => ROUTES.filter((r) => variant.screens.includes(r.route)), [variant]);
  const [{ route, params }, setLocation] = useState(() => parseHash(variant.screens));
  const [settings, setSettings] = useState<Settings | null>(null);
  const [bootError, setBootError] = useState<unknown>(null);
  const [signedOut, setSignedOut] = useState(false);
  const [toasts] = useState(() => createStore<Toast | null>(null));
  const draftRef = useRef<MealDraft | null>(null);
  const mainRef = useRef<HTMLElement>(null);
  const now = useNow(60_000);

  const loadSettings = useCallback(() => {
    setBootError(null);
    getSettings()
      .then((s) => {
        setSettings(s);
        setSignedOut(false);
      })
      .catch((err) => {
        if (err instanceof ApiError && err.status === 401) setSignedOut(true);
        else setBootError(err);
      });
  }, []);

  useEffect(() => {
    // After the first screen has had its data and render (not competing with them), when idle.
    const t = setTimeout(() => requestIdleCallback(() => void loadScoreScreen().catch(() => undefined)), 2000);
    return () => clearTimeout(t);
  }, []);

  useEffect(() => {
    loadSettings();
    const off = onUnauthenticated(() => setSignedOut(true));
    // A transition: the current screen stays until the next one can render (no loading flash).
    const onHash = () => startTransition(() => setLocation(parseHash(variant.screens)));
    window.addEventListener('hashchange', onHash);
    return () => {
      off();
      window.removeEventListener('hashchange', onHash);
    };
  }, [loadSettings, variant]);

  // Another client (or the CLI) may change settings: keep ours current.
  useServiceEvents(['settings.updated'], loadSettings);

  // A restore replaced the data (from this window, another one or `chyme restore`): nothing shown
  // is true any more, down to the Edit and Delete buttons of meals that are gone.
  useEffect(
    () =>
      subscribe((ev) => {
        if (ev.type !== 'database.restored') return;
        toasts.update(() => ({ id: Date.now(), message: 'A backup was restored: showing the restored data.', opts: {} }));
        startAfreshAfterRestore(600);
      }),
    [],
  );

  // Move focus to the screen on navigation, so keyboard and screen-reader users land on it.
  const firstRoute = useRef(true);
  useEffect(() => {
    if (firstRoute.current) {
      firstRoute.current = false;
      return;
    }
    mainRef.current?.focus();
  }, [route]);

  // Closes the toast `id`, or whichever is showing; a newer toast (an action's own "Meal restored.") stays.
  const closeToast = useCallback((id?: number) => toasts.update((t) => (id === undefined || t?.id === id ? null : t)), [toasts]);

  const ctx = useMemo<AppContextValue | null>(() => {
    if (!settings) return null;
    return {
      settings,
      setSettings,
      tz: settings.timezone,
      dayStart: settings.day_start,
      today: todayIn(settings.timezone, settings.day_start),
      toast: (message, opts = {}) => toasts.update(() => ({ id: ++toastCount, message, opts })),
      dismissToast: () => closeToast(),
      navigate: (r, p) => {
        const qs = p ? `?${new URLSearchParams(p).toString()}` : '';
        const hash = `#/${r}${qs}`;
        if (location.hash === hash) return;
        if (r !== route) {
          location.hash = hash;
          return;
        }
        // Same screen, new parameters (Day/Week, the day stepper): render in this click, not in a
        // transition after an async hashchange, so the control the user pressed shows its new value
        // at once. pushState keeps Back working; it fires no hashchange of its own.
        history.pushState(null, '', hash);
        setLocation(parseHash(variant.screens));
      },
      openMeal: (draft) => {
        draftRef.current = draft;
        if (location.hash.startsWith('#/log')) setLocation({ route: 'log', params: new URLSearchParams(`n=${Date.now()}`) });
        else location.hash = '#/log';
      },
      takeDraft: () => {
        const d = draftRef.current;
        draftRef.current = null;
        return d;
      },
    };
    // `now` re-derives `today` when the day turns.
  }, [settings, now, route, variant]);

  if (signedOut) {
    return (
      <Gate title="Open Chyme from its link">
        <p>
          This page needs a session. In the terminal where <code>chyme serve</code> runs, open the link on the line starting
          with <code>App:</code>. It holds a one-time token that signs this browser in.
        </p>
        <p className="muted">Each link works once. Restart <code>chyme serve</code> for a new one.</p>
      </Gate>
    );
  }
  if (!ctx) {
    return (
      <Gate title={bootError ? 'Chyme could not start' : 'Opening Chyme'}>
        {bootError ? <ErrorNote error={bootError} onRetry={loadSettings} /> : <Loading />}
      </Gate>
    );
  }

  let screen: ReactNode;
  switch (route) {
    case 'today':
      screen = <TodayScreen />;
      break;
    case 'log':
      screen = <LogScreen key={params.get('n') ?? ''} />;
      break;
    case 'score':
      screen = <ScoreScreen />;
      break;
    case 'timeline':
      screen = <TimelineScreen params={params} />;
      break;
    case 'import':
      screen = <ImportScreen />;
      break;
    case 'integrations':
      screen = variant.integrations ?? <IntegrationsScreen />;
      break;
  }

  return (
    <AppContext.Provider value={ctx}>
      <a className="skip-link" href="#main" onClick={(e) => (e.preventDefault(), mainRef.current?.focus())}>
        Skip to content
      </a>
      <div className="shell">
        <aside className="sidebar">
          <p className="brand">
            <span className="brand__mark" aria-hidden="true" />
            Chyme
          </p>
          <nav aria-label="Screens">
            <ul>
              {routes.map((r) => (
                <li key={r.route}>
                  <a href={`#/${r.route}`} aria-current={r.route === route ? 'page' : undefined} className="nav-link">
                    <Icon name={r.icon} />
                    <span>{r.label}</span>
                  </a>
                </li>
              ))}
            </ul>
          </nav>
          <div className="sidebar__foot">
            {variant.live ? <LiveBadge /> : null}
            <ThemeToggle />
          </div>
        </aside>
        <main className="main" id="main" ref={mainRef} tabIndex={-1}>
          <Suspense fallback={<Loading />}>{screen}</Suspense>
        </main>
      </div>
      <Toaster store={toasts} onClose={closeToast} mainRef={mainRef} />
    </AppContext.Provider>
  );
}
