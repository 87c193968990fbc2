/**
 * The desktop's view of the digestive state: the tray icon and menu, the window title, and the
 * notifications the user opted into (with their stored preferences). It is fed by main.ts from
 * the service's in-process event bus; what a state is called and how long it lasts read the same
 * here as everywhere (server/digestion/vocabulary.ts, server/engine/format.ts).
 */
import { app, Menu, nativeImage, Notification, Tray, type BrowserWindow, type NativeImage } from 'electron';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { z } from 'zod';
import type { DigestiveStateSchema } from '../server/digestion/resources.js';
import { NEXT_STATE, STATE_LABEL, STATE_STARTED } from '../server/digestion/vocabulary.js';
import { formatDuration } from '../server/engine/format.js';
import type { DigestiveStateName } from '../server/engine/types.js';

/** The digestion.state resource, as the API and the digestion.state_changed event carry it. */
export type DigestiveStateResource = z.output<typeof DigestiveStateSchema>;

const DEFAULT_PREFS: ChymeNotificationPrefs = { fasted: true, processing: false, settling: false };

const prefsPath = () => join(app.getPath('userData'), 'notifications.json');

export function readNotificationPrefs(): ChymeNotificationPrefs {
  try {
    const raw = JSON.parse(readFileSync(prefsPath(), 'utf8')) as Partial<ChymeNotificationPrefs>;
    return { fasted: raw.fasted === true, processing: raw.processing === true, settling: raw.settling === true };
  } catch {
    return { ...DEFAULT_PREFS };
  }
}

export function writeNotificationPrefs(raw: unknown): ChymeNotificationPrefs {
  const input = (raw ?? {}) as Record<string, unknown>;
  const prefs: ChymeNotificationPrefs = { fasted: input.fasted === true, processing: input.processing === true, settling: input.settling === true };
  const tmp = `${prefsPath()}.tmp`;
  writeFileSync(tmp, JSON.stringify(prefs, null, 2));
  renameSync(tmp, prefsPath());
  return prefs;
}

/** A 32×32 ring in the state's colour, drawn pixel by pixel (no image files to ship). */
function trayIcon(state: DigestiveStateName | undefined): NativeImage {
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

export interface DesktopStatus {
  /** True when this desktop has a tray (closing the window then keeps Chyme running). */
  readonly hasTray: boolean;
  /** A new state: from the bus (notify: true) or read at start (notify: false). */
  show(state: DigestiveStateResource, options: { notify: boolean }): void;
  /** Redraws the minutes left, which tick with the clock between changes. */
  refresh(): void;
}

export function createDesktopStatus(deps: { window(): BrowserWindow | null; showWindow(): void }): DesktopStatus {
  let current: { state: DigestiveStateResource; at: number } | null = null;
  let tray: Tray | null = null;
  try {
    tray = new Tray(trayIcon(undefined));
    tray.on('click', () => deps.showWindow());
  } catch {
    tray = null; // no tray on this desktop: the window title stays the way to see the state
  }

  const line = (): string => {
    if (!current) return 'Digestive state: unknown';
    const s = current.state;
    const elapsedMin = (Date.now() - current.at) / 60_000;
    if (s.state === 'fasted') return `Fasted for ${formatDuration(Math.max(0, (Date.now() - Date.parse(s.since)) / 60_000))}`;
    const left = Math.max(0, s.minutes_remaining - Math.floor(elapsedMin));
    return `${STATE_LABEL[s.state]}: ${formatDuration(left)} to ${NEXT_STATE[s.state]}`;
  };

  const refresh = () => {
    const text = line();
    deps.window()?.setTitle(`Chyme · ${text}`);
    if (!tray) return;
    tray.setImage(trayIcon(current?.state.state));
    tray.setToolTip(`Chyme · ${text}`);
    if (process.platform === 'darwin') tray.setTitle(current ? STATE_LABEL[current.state.state] : '');
    tray.setContextMenu(
      Menu.buildFromTemplate([
        { label: text, enabled: false },
        { type: 'separator' },
        { label: 'Open Chyme', click: () => deps.showWindow() },
        { label: 'Quit Chyme', click: () => app.quit() },
      ]),
    );
  };

  const notify = (state: DigestiveStateResource) => {
    if (!readNotificationPrefs()[state.state] || !Notification.isSupported()) return;
    const n = new Notification({ title: `Chyme: ${STATE_LABEL[state.state]}`, body: STATE_STARTED[state.state], silent: true });
    n.on('click', () => deps.showWindow());
    n.show();
  };

  return {
    hasTray: tray !== null,
    show(state, options) {
      current = { state, at: Date.now() };
      refresh();
      if (options.notify) notify(state);
    },
    refresh,
  };
}
