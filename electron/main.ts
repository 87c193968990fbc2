/**
 * Chyme's Electron main process. Deliberately thin: it runs the same service `chyme serve` runs,
 * in-process over the user's data folder, and opens a locked-down window on it. The renderer is an
 * ordinary client of the `/v1` API; the preload bridge only hands it an API key and the
 * notification preferences.
 */
import { app, BrowserWindow, dialog, ipcMain, Menu, nativeImage, nativeTheme, Notification, session, shell, Tray, type IpcMainInvokeEvent, type NativeImage } from 'electron';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createService, type Service } from '../server/service.js';

const here = dirname(fileURLToPath(import.meta.url));
/** Where electron/build-native.mjs puts better-sqlite3 rebuilt for Electron's ABI. */
const NATIVE_BINDING = join(here, '..', '..', 'electron', 'native', 'better_sqlite3.node');
const PRELOAD = join(here, 'preload.cjs');

type StateName = 'fasted' | 'processing' | 'settling';
interface DigestiveState {
  state: StateName;
  minutes_remaining: number;
  since: string;
  fasted_at: string;
  active_meals: number;
}

const DEFAULT_PREFS: ChymeNotificationPrefs = { fasted: true, processing: false, settling: false };

let service: Service | null = null;
let rendererKey = '';
let win: BrowserWindow | null = null;
let tray: Tray | null = null;
let current: { state: DigestiveState; at: number } | null = null;
let quitting = false;

// One Chyme per user: a second launch focuses the first window instead.
if (!app.requestSingleInstanceLock()) {
  app.quit();
} else {
  app.on('second-instance', () => showWindow());
  app.whenReady().then(start).catch(fatal);
}

function fatal(err: unknown): void {
  console.error(err);
  dialog.showErrorBox('Chyme could not start', err instanceof Error ? err.message : String(err));
  app.exit(1);
}

async function start(): Promise<void> {
  const userData = app.getPath('userData');
  mkdirSync(userData, { recursive: true });
  service = await startService(userData);
  rendererKey = service.createRendererKey();
  const origin = new URL(service.url).origin;

  lockDownSession(origin);
  registerIpc(origin);
  createWindow(service.url);
  createTray();

  // Digestive-state changes drive the tray and the notifications the user opted into.
  service.app.bus.subscribe((event) => {
    if (event.type !== 'digestion.state_changed') return;
    const state = event.data.object as DigestiveState;
    current = { state, at: Date.now() };
    updateTray();
    notify(state);
  });
  await refreshState();
  // Minutes remaining in the tray tick with the clock between changes.
  setInterval(() => void refreshState(), 60_000).unref();
}

/**
 * The window's origin includes the port, and the renderer keeps this device's preferences (its theme)
 * in localStorage, which is per origin; favourite meals of earlier versions wait there until moved. So the app listens on the port it used
 * last time and only takes a new one (remembered from then on) when that one is taken.
 */
async function startService(userData: string): Promise<Service> {
  const portFile = join(userData, 'port');
  let saved = 0;
  try {
    const n = Number(readFileSync(portFile, 'utf8').trim());
    if (Number.isInteger(n) && n > 0 && n < 65536) saved = n;
  } catch {
    // First launch: no port yet.
  }
  const open = (port: number) =>
    createService({
      dbPath: join(userData, 'chyme.db'),
      host: '127.0.0.1',
      port,
      ...(existsSync(NATIVE_BINDING) ? { nativeBinding: NATIVE_BINDING } : {}),
    });
  let started: Service;
  try {
    started = await open(saved);
  } catch (err) {
    if (saved === 0 || (err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    started = await open(0);
  }
  if (started.port !== saved) {
    const tmp = `${portFile}.tmp`;
    writeFileSync(tmp, String(started.port));
    renameSync(tmp, portFile);
  }
  return started;
}

function lockDownSession(origin: string): void {
  const ses = session.defaultSession;
  // The page needs no camera, geolocation or web notifications (ours are native, from here).
  ses.setPermissionRequestHandler((_wc, _permission, callback) => callback(false));
  ses.setPermissionCheckHandler(() => false);
  // Defence in depth: the service already sends a CSP; make sure every response of ours has one.
  ses.webRequest.onHeadersReceived((details, callback) => {
    const headers = details.responseHeaders ?? {};
    const hasCsp = Object.keys(headers).some((k) => k.toLowerCase() === 'content-security-policy');
    if (details.url.startsWith(origin) && !hasCsp) {
      headers['Content-Security-Policy'] = ["default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"];
    }
    callback({ responseHeaders: headers });
  });
}

function createWindow(url: string): void {
  win = new BrowserWindow({
    width: 1240,
    height: 860,
    minWidth: 420,
    minHeight: 560,
    title: 'Chyme',
    show: false,
    // The renderer's page colour (renderer/src/styles/base.css --bg), so the window never flashes the other theme.
    backgroundColor: nativeTheme.shouldUseDarkColors ? '#111316' : '#f5f3ee',
    autoHideMenuBar: true,
    webPreferences: {
      preload: PRELOAD,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      webviewTag: false,
      spellcheck: false,
      additionalArguments: [`--chyme-version=${app.getVersion()}`],
    },
  });
  const origin = new URL(url).origin;
  const wc = win.webContents;
  // No new windows; links to the web open in the user's browser.
  wc.setWindowOpenHandler(({ url: target }) => {
    if (/^https?:\/\//.test(target) && new URL(target).origin !== origin) void shell.openExternal(target);
    return { action: 'deny' };
  });
  // The window only ever shows the local service.
  wc.on('will-navigate', (event, target) => {
    if (new URL(target).origin !== origin) event.preventDefault();
  });
  wc.on('will-redirect', (event, target) => {
    if (new URL(target).origin !== origin) event.preventDefault();
  });
  wc.on('will-attach-webview', (event) => event.preventDefault());
  win.once('ready-to-show', () => win?.show());
  // Closing the window keeps Chyme in the tray (the dial and notifications keep running).
  win.on('close', (event) => {
    if (!quitting && tray) {
      event.preventDefault();
      win?.hide();
    }
  });
  win.on('closed', () => (win = null));
  void win.loadURL(url);
}

function showWindow(): void {
  if (!win && service) createWindow(service.url);
  if (!win) return;
  if (win.isMinimized()) win.restore();
  win.show();
  win.focus();
}

/** IPC answers only our own page, never a frame from anywhere else. */
function fromOurPage(event: IpcMainInvokeEvent, origin: string): boolean {
  const frameUrl = event.senderFrame?.url;
  return Boolean(frameUrl && new URL(frameUrl).origin === origin && event.sender === win?.webContents);
}

function registerIpc(origin: string): void {
  ipcMain.handle('chyme:api-key', (event) => {
    if (!fromOurPage(event, origin)) throw new Error('refused');
    return rendererKey;
  });
  ipcMain.handle('chyme:get-notification-prefs', (event) => {
    if (!fromOurPage(event, origin)) throw new Error('refused');
    return readPrefs();
  });
  ipcMain.handle('chyme:set-notification-prefs', (event, raw: unknown) => {
    if (!fromOurPage(event, origin)) throw new Error('refused');
    const input = (raw ?? {}) as Record<string, unknown>;
    const prefs: ChymeNotificationPrefs = {
      fasted: input.fasted === true,
      processing: input.processing === true,
      settling: input.settling === true,
    };
    writePrefs(prefs);
    return prefs;
  });
}

const prefsPath = () => join(app.getPath('userData'), 'notifications.json');

function readPrefs(): ChymeNotificationPrefs {
  try {
    const raw = JSON.parse(readFileSync(prefsPath(), 'utf8')) as Partial<ChymeNotificationPrefs>;
    return { fasted: raw.fasted === true, processing: raw.processing === true, settling: raw.settling === true };
  } catch {
    return { ...DEFAULT_PREFS };
  }
}

function writePrefs(prefs: ChymeNotificationPrefs): void {
  const tmp = `${prefsPath()}.tmp`;
  writeFileSync(tmp, JSON.stringify(prefs, null, 2));
  renameSync(tmp, prefsPath());
}

const LABEL: Record<StateName, string> = { fasted: 'Fasted', processing: 'Processing', settling: 'Settling' };
const NEXT: Record<StateName, StateName> = { processing: 'settling', settling: 'fasted', fasted: 'processing' };
const BODY: Record<StateName, string> = {
  processing: 'Digestion has started on your meal.',
  settling: 'Your stomach is nearly empty; digestion is settling.',
  fasted: 'Digestion has settled: you are in the fasted state.',
};

function notify(state: DigestiveState): void {
  if (!readPrefs()[state.state] || !Notification.isSupported()) return;
  const n = new Notification({ title: `Chyme: ${LABEL[state.state]}`, body: BODY[state.state], silent: true });
  n.on('click', () => showWindow());
  n.show();
}

async function refreshState(): Promise<void> {
  if (!service) return;
  try {
    const res = await fetch(`${service.url}/v1/digestion/state`, { headers: { Authorization: `Bearer ${rendererKey}` } });
    if (res.ok) current = { state: (await res.json()) as DigestiveState, at: Date.now() };
  } catch {
    /* the service is stopping */
  }
  updateTray();
}

function fmtMinutes(min: number): string {
  const m = Math.max(0, Math.round(min));
  return m < 60 ? `${m} min` : `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, '0')} min`;
}

function stateLine(): string {
  if (!current) return 'Digestive state: unknown';
  const s = current.state;
  const left = Math.max(0, s.minutes_remaining - Math.floor((Date.now() - current.at) / 60000));
  if (s.state === 'fasted') return `Fasted for ${fmtMinutes((Date.now() - Date.parse(s.since)) / 60000)}`;
  return `${LABEL[s.state]}: ${fmtMinutes(left)} to ${NEXT[s.state]}`;
}

/** A 32×32 ring in the state's colour, drawn pixel by pixel (no image files to ship). */
function trayIcon(state: StateName | undefined): NativeImage {
  const size = 32;
  const [r, g, b] = state === 'processing' ? [211, 146, 51] : state === 'settling' ? [111, 117, 200] : state === 'fasted' ? [47, 139, 115] : [128, 128, 128];
  const buf = Buffer.alloc(size * size * 4);
  const c = (size - 1) / 2;
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const d = Math.hypot(x - c, y - c);
      // Anti-aliased ring between radii 9 and 14.
      const alpha = Math.max(0, Math.min(1, 14.5 - d)) * Math.max(0, Math.min(1, d - 8.5));
      const i = (y * size + x) * 4;
      buf[i] = b; // BGRA
      buf[i + 1] = g;
      buf[i + 2] = r;
      buf[i + 3] = Math.round(alpha * 255);
    }
  }
  return nativeImage.createFromBitmap(buf, { width: size, height: size, scaleFactor: 2 });
}

function createTray(): void {
  try {
    tray = new Tray(trayIcon(undefined));
  } catch {
    tray = null; // no tray on this desktop: the window stays the way to see the state
    return;
  }
  tray.on('click', () => showWindow());
  updateTray();
}

function updateTray(): void {
  const line = stateLine();
  win?.setTitle(`Chyme · ${line}`);
  if (!tray) return;
  tray.setImage(trayIcon(current?.state.state));
  tray.setToolTip(`Chyme · ${line}`);
  if (process.platform === 'darwin') tray.setTitle(current ? LABEL[current.state.state] : '');
  tray.setContextMenu(
    Menu.buildFromTemplate([
      { label: line, enabled: false },
      { type: 'separator' },
      { label: 'Open Chyme', click: () => showWindow() },
      { label: 'Quit Chyme', click: () => app.quit() },
    ]),
  );
}

// Clean shutdown: stop the service (in-flight requests finish, webhook deliveries stay queued in
// the database for the next start), then exit.
app.on('before-quit', (event) => {
  quitting = true;
  if (!service) return;
  event.preventDefault();
  const s = service;
  service = null;
  s.stop()
    .catch((err: unknown) => console.error('shutdown failed', err))
    .finally(() => app.exit(0));
});

app.on('window-all-closed', () => {
  // With a tray, Chyme keeps running; without one, closing the window quits.
  if (!tray) app.quit();
});

app.on('activate', () => showWindow());

// Never let a renderer create webviews or open other windows, whatever the page tries.
app.on('web-contents-created', (_event, contents) => {
  contents.setWindowOpenHandler(() => ({ action: 'deny' }));
});
