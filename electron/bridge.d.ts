/**
 * The one object the Electron preload exposes to the renderer as `window.chyme`. It is deliberately
 * narrow: no Node, no IPC channel names, no file system. Everything else goes through the `/v1` API,
 * exactly as it does in a browser. In browser mode `window.chyme` is undefined.
 *
 * This file is a global (script) declaration shared by `electron/tsconfig.json` and
 * `renderer/tsconfig.json`, so both sides compile against the same shape.
 */

/** Which digestive-state changes the user wants a desktop notification for. */
interface ChymeNotificationPrefs {
  /** Notify when digestion enters this state. */
  fasted: boolean;
  processing: boolean;
  settling: boolean;
}

interface ChymeBridge {
  /** `process.platform` of the desktop app: "darwin", "win32", "linux". */
  readonly platform: string;
  /** The desktop app's version. */
  readonly version: string;
  /** The renderer's own API key (all scopes), created by the main process for this run. */
  apiKey(): Promise<string>;
  /** Current notification preferences (stored by the main process in the user's data folder). */
  getNotificationPrefs(): Promise<ChymeNotificationPrefs>;
  /** Replaces the notification preferences; resolves to what was stored. */
  setNotificationPrefs(prefs: ChymeNotificationPrefs): Promise<ChymeNotificationPrefs>;
}

interface Window {
  readonly chyme?: ChymeBridge;
}
