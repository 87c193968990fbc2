/**
 * The pairing code in what the desktop's "Add a phone" QR code holds: the link
 * `https://<relay>/app/#pair=<code>` (server/sync/pairing-url.ts), or a code on its own. One parser
 * for the link the page is opened with (main.tsx) and for what the camera reads (QrScanner.tsx).
 */

/**
 * How every pairing code starts, whatever its version (server/sync/index.ts's PAIRING_PREFIX is
 * `chyme-sync:v2:`; the renderer may not import that module). The worker's join checks the rest.
 */
const CODE_START = /^chyme-sync:/i;

/** The code a `#pair=` fragment carries, or null when the fragment is not one. */
export function pairingCodeFromFragment(hash: string): string | null {
  const m = /^#pair=(.+)$/.exec(hash);
  if (!m) return null;
  try {
    return decodeURIComponent(m[1]!);
  } catch {
    return null;
  }
}

/** The pairing code in a QR code's text (a pairing link or a bare code), or null when it holds neither. */
export function pairingCodeFromScan(text: string): string | null {
  const trimmed = text.trim();
  if (CODE_START.test(trimmed)) return trimmed;
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    return null;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return null;
  const code = pairingCodeFromFragment(url.hash);
  return code !== null && CODE_START.test(code) ? code : null;
}
