/** Where the relay serves the app; the pairing URL (phoneAppUrl) points here. */
export const PHONE_APP_PATH = '/app/';

/**
 * The address that opens the phone app with `code` filled in, for a relay at `relayUrl`: the same
 * host and path with https for wss (http for ws), and the code in the fragment, which the browser
 * never sends to any server.
 */
export function phoneAppUrl(relayUrl: string, code: string): string {
  const url = new URL(relayUrl);
  if (url.protocol !== 'ws:' && url.protocol !== 'wss:') throw new TypeError(`The relay address must be a ws:// or wss:// URL, not ${JSON.stringify(relayUrl)}.`);
  url.protocol = url.protocol === 'wss:' ? 'https:' : 'http:';
  // A relay behind a proxy at a path (wss://host/chyme) serves the app below that path.
  url.pathname = url.pathname.replace(/\/+$/, '') + PHONE_APP_PATH;
  url.search = '';
  url.hash = '';
  url.username = '';
  url.password = '';
  return `${url.href}#pair=${code}`;
}
