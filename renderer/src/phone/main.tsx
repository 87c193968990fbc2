/**
 * The phone page: takes the database's Web Lock, starts the worker that runs Chyme over the
 * phone's own database (core-worker.ts), makes it the app's transport and starts the desktop's
 * app with the phone's screens. A second tab of the app does not get the lock, says so, and opens
 * nothing until the first tab goes (then it takes over).
 *
 * `window.chymeStorage` is what the phone's tests read: the state, the worker's timings, and
 * `request`, which sends a `/v1` request through the same transport as the screens.
 */
import { setTransport, type Transport } from '../api/client';
import { setEventFeed } from '../api/events';
import { startApp } from '../boot';
import type { ControlResults, CoreReady } from './protocol';
import { pairingCodeFromFragment } from './pairing-link';
import { NOT_SECURE, PhoneSync } from './PhoneSync';
import { registerServiceWorker } from './sw-register';
import { connectWorker } from './transport';
import { onErase, showErased, staysErased } from './erased';
import './phone.css';

/** One lock per origin: every tab of the app asks for the same one. */
const LOCK = 'chyme-database';
const OPEN_ELSEWHERE = 'Chyme is open in another tab. Close it, or use that tab.';

type State = 'waiting' | 'blocked' | 'opening' | 'ready' | 'failed' | 'erased';

interface ChymeStorage {
  state: State;
  ready: CoreReady | null;
  request(method: string, path: string, body?: unknown, query?: Record<string, string>): Promise<{ status: number; body: unknown; etag: string | null }>;
  /** The worker's meal count and join progress (bench/phone.ts); null before the worker starts. */
  progress: (() => Promise<ControlResults['progress']>) | null;
  /** The sizes of the worker's WebAssembly memories (bench/phone.ts); null before the worker starts. */
  memory: (() => Promise<ControlResults['memory']>) | null;
}

const status = document.getElementById('status')!;
let transport: Transport | null = null;

const storage: ChymeStorage = {
  state: 'waiting',
  ready: null,
  progress: null,
  memory: null,
  async request(method, path, body, query = {}) {
    if (!transport) throw new Error(`The database is not open here (${storage.state}).`);
    const res = await transport({ method, path, query, headers: {}, body: body === undefined ? undefined : JSON.stringify(body), signal: undefined });
    return { status: res.status, body: (await res.json()) as unknown, etag: res.headers.get('ETag') };
  },
};
(window as unknown as { chymeStorage: ChymeStorage }).chymeStorage = storage;

function show(state: State, text: string): void {
  storage.state = state;
  status.textContent = text;
  // Once the app is on screen the message goes; the app's own <main> takes over.
  status.parentElement!.hidden = text === '';
}

/**
 * The desktop's "Add a phone" QR code opens `…/app/#pair=<code>`: the code fills the sync card's
 * field, and leaves the address bar (and the history) at once, since it is the key to the history.
 */
function takePairingCode(): string {
  const code = pairingCodeFromFragment(location.hash);
  if (code === null) return '';
  history.replaceState(null, '', `${location.pathname}${location.search}#/integrations`);
  return code;
}

/** The erased view instead of the app (erased.ts): nothing of the app runs or is stored. */
function erasedView(): void {
  storage.state = 'erased';
  showErased();
}

function start(): void {
  // A tab that waited for the lock while another forgot the phone opens nothing.
  if (staysErased()) return erasedView();
  // The app shows its own "Opening Chyme" until the worker answers.
  show('opening', '');
  const worker = new Worker(new URL('./core-worker.ts', import.meta.url), { type: 'module', name: 'chyme-core' });
  const core = connectWorker(worker);
  const pairingCode = takePairingCode();
  transport = core.transport;
  storage.progress = () => core.control('progress');
  storage.memory = () => core.control('memory');
  core.ready.then(
    (ready) => {
      storage.ready = ready;
      show('ready', '');
    },
    (err: Error) => show('failed', `Chyme could not open its database: ${err.message}`),
  );
  setTransport(core.transport);
  setEventFeed(core.events);
  document.documentElement.dataset.platform = 'phone';
  const app = startApp({ screens: ['today', 'log', 'score', 'timeline', 'integrations'], integrations: <PhoneSync core={core} pairingCode={pairingCode} />, live: false });
  onErase(() => {
    storage.state = 'erased';
    transport = null;
    app.unmount();
    worker.terminate();
  });
}

// The offline copy of the app, after the page's own files have loaded so that its downloads do not hold up the first screen.
window.addEventListener('load', () => void registerServiceWorker().catch((err: Error) => console.warn(`No offline copy of the app: ${err.message}`)), { once: true });

/** Holds the lock for the rest of the page's life: the browser releases it when the page goes. */
const holdForever = () => new Promise<never>(() => {});

// Without a secure context there is no Web Lock, OPFS or WebCrypto: nothing of the app can run.
if (!isSecureContext) show('failed', NOT_SECURE);
else if (staysErased()) erasedView();
else void navigator.locks.request(LOCK, { ifAvailable: true }, (lock) => {
  if (lock) {
    start();
    return holdForever();
  }
  show('blocked', OPEN_ELSEWHERE);
  // Queued: when the other tab closes (or, after a reload, its old page finishes going) this one opens.
  void navigator.locks.request(LOCK, () => {
    start();
    return holdForever();
  });
  return undefined;
});
