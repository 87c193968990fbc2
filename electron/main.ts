/**
 * Chyme's Electron main process. Deliberately thin: it runs the same service `chyme serve` runs,
 * in-process over the user's data folder, and opens a locked-down window on it. The renderer is an
 * ordinary client of the `/v1` API; the preload bridge only hands it an API key and the
 * notification preferences. The tray and notifications are in status.ts, fed from the service's
 * in-process event bus.
 */
// First, before the service's modules allocate (see server/memory.ts).
import './compact-heap.js';
import { app, BrowserWindow, dialog, ipcMain, nativeTheme, session, shell, type IpcMainInvokeEvent } from 'electron';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CONTENT_SECURITY_POLICY } from '../server/content-security.js';
import { stateResource } from '../server/digestion/resources.js';
import { currentState } from '../server/digestion/service.js';
import { createService, type Service } from '../server/service.js';
import { createDesktopStatus, readNotificationPrefs, writeNotificationPrefs, type DesktopStatus, type DigestiveStateResource } from './status.js';

const here = dirname(fileURLToPath(import.meta.url));
/** Where electron/build-native.mjs puts better-sqlite3 rebuilt for Electron's ABI. */
const NATIVE_BINDING = join(here, '..', '..', 'electron', 'native', 'better_sqlite3.node');
const PRELOAD = join(here, 'preload.cjs');

let service: Service | null = null;
let rendererKey = '';
let win: BrowserWindow | null = null;
let status: DesktopStatus | null = null;
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
  status = createDesktopStatus({ window: () => win, showWindow });

  // The state now, read in-process; then every change from the bus drives the tray and the
  // notifications the user opted into.
  const { app: context } = service;
  status.show(stateResource(currentState(context), context.clock.now()) as DigestiveStateResource, { notify: false });
  context.bus.subscribe((event) => {
    if (event.type === 'digestion.state_changed') status?.show(event.data.object as DigestiveStateResource, { notify: true });
  });
  // Minutes remaining in the tray tick with the clock between changes.
  setInterval(() => status?.refresh(), 60_000).unref();
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
      headers['Content-Security-Policy'] = [CONTENT_SECURITY_POLICY];
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
    if (!quitting && status?.hasTray) {
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
    return readNotificationPrefs();
  });
  ipcMain.handle('chyme:set-notification-prefs', (event, raw: unknown) => {
    if (!fromOurPage(event, origin)) throw new Error('refused');
    return writeNotificationPrefs(raw);
  });
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
  if (!status?.hasTray) app.quit();
});

app.on('activate', () => showWindow());

// Never let a renderer create webviews or open other windows, whatever the page tries.
app.on('web-contents-created', (_event, contents) => {
  contents.setWindowOpenHandler(() => ({ action: 'deny' }));
});
