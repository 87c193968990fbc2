/**
 * The one Content-Security-Policy of the app and the headers sent with every page of it. The
 * service sends them with the renderer's files (api/static.ts); the desktop shell adds the same
 * policy to any response of the service that lacks one (electron/main.ts).
 */

/** The page may talk only to its own origin; recharts needs inline style attributes. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * The phone app's policy (issue 29): the app's, plus compiling WebAssembly (SQLite, Automerge)
 * and starting its own Dedicated Worker, which holds the database. A worker's policy is the one
 * its script is served with, so a server of the phone's files sends this with every file.
 */
export const PHONE_CONTENT_SECURITY_POLICY = CONTENT_SECURITY_POLICY.replace("script-src 'self'", "script-src 'self' 'wasm-unsafe-eval'") + "; worker-src 'self'";

export const PAGE_SECURITY_HEADERS = {
  'Content-Security-Policy': CONTENT_SECURITY_POLICY,
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  // The launch URL carries a token; never leak it to another site.
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
} as const;
