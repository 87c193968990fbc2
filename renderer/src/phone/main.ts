/**
 * The phone page (issue 29's storage spike): takes the database's Web Lock, then starts the
 * storage worker. A second tab of the app does not get the lock, says so, and opens nothing until
 * the first tab goes (then it takes over). `window.chymeStorage` is the spike's surface for the
 * storage test: the state, the worker's timings, and the worker's operations.
 */
import type { StorageNotice, StorageOp, StorageOps, StorageReady, StorageRequest } from './protocol.js';

/** One lock per origin: every tab of the app asks for the same one. */
const LOCK = 'chyme-database';
const OPEN_ELSEWHERE = 'Chyme is open in another tab. Close it, or use that tab.';

type State = 'waiting' | 'blocked' | 'opening' | 'ready' | 'failed';

interface ChymeStorage {
  state: State;
  ready: StorageReady | null;
  call<K extends StorageOp>(op: K, arg: Parameters<StorageOps[K]>[0]): Promise<ReturnType<StorageOps[K]>>;
}

const status = document.getElementById('status')!;
const pending = new Map<number, { resolve(value: unknown): void; reject(err: Error): void }>();
let worker: Worker | null = null;
let nextId = 1;

const storage: ChymeStorage = {
  state: 'waiting',
  ready: null,
  call(op, arg) {
    if (!worker) return Promise.reject(new Error(`The database is not open here (${storage.state}).`));
    const id = nextId++;
    const request: StorageRequest = { id, op, arg };
    worker.postMessage(request);
    return new Promise((resolve, reject) => pending.set(id, { resolve: resolve as (v: unknown) => void, reject }));
  },
};
(window as unknown as { chymeStorage: ChymeStorage }).chymeStorage = storage;

function show(state: State, text: string): void {
  storage.state = state;
  status.textContent = text;
}

function startWorker(): void {
  show('opening', 'Opening your history…');
  worker = new Worker(new URL('./storage-worker.ts', import.meta.url), { type: 'module', name: 'chyme-storage' });
  worker.onmessage = (event: MessageEvent<StorageNotice>) => {
    const notice = event.data;
    if ('type' in notice) {
      if (notice.type === 'ready') {
        storage.ready = notice;
        show('ready', 'Your history is open on this device.');
      } else {
        show('failed', `Chyme could not open its database: ${notice.message}`);
      }
      return;
    }
    const waiter = pending.get(notice.id);
    pending.delete(notice.id);
    if (notice.ok) waiter?.resolve(notice.value);
    else waiter?.reject(new Error(notice.error));
  };
}

/** Holds the lock for the rest of the page's life: the browser releases it when the page goes. */
const holdForever = () => new Promise<never>(() => {});

void navigator.locks.request(LOCK, { ifAvailable: true }, (lock) => {
  if (lock) {
    startWorker();
    return holdForever();
  }
  show('blocked', OPEN_ELSEWHERE);
  // Queued: when the other tab closes (or, after a reload, its old page finishes going) this one opens.
  void navigator.locks.request(LOCK, () => {
    startWorker();
    return holdForever();
  });
  return undefined;
});
