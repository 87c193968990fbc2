/**
 * The preload bridge. Sandboxed preloads run as CommonJS with a reduced `require`, so this file is
 * `.cts` and imports only `electron`. It exposes exactly the ChymeBridge (electron/bridge.d.ts):
 * three invocations on fixed channels, no ipcRenderer, no Node.
 */
import electron = require('electron');

const { contextBridge, ipcRenderer } = electron;

const bridge: ChymeBridge = {
  platform: process.platform,
  // main passes its version as an argument: a sandboxed preload cannot read package.json.
  version: process.argv.find((a) => a.startsWith('--chyme-version='))?.slice('--chyme-version='.length) ?? '',
  apiKey: () => ipcRenderer.invoke('chyme:api-key') as Promise<string>,
  getNotificationPrefs: () => ipcRenderer.invoke('chyme:get-notification-prefs') as Promise<ChymeNotificationPrefs>,
  setNotificationPrefs: (prefs: ChymeNotificationPrefs) =>
    ipcRenderer.invoke('chyme:set-notification-prefs', {
      fasted: prefs.fasted === true,
      processing: prefs.processing === true,
      settling: prefs.settling === true,
    }) as Promise<ChymeNotificationPrefs>,
};

contextBridge.exposeInMainWorld('chyme', bridge);
