import { existsSync, realpathSync, statSync, type Stats } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join, sep } from 'node:path';
import { promisify } from 'node:util';
import { brotliCompress, constants as zlib, gzip } from 'node:zlib';
import { PAGE_SECURITY_HEADERS, PHONE_CONTENT_SECURITY_POLICY } from '../content-security.js';
import { packageRoot } from '../paths.js';
import { PHONE_APP_PATH } from './pairing-url.js';

/**
 * The phone app's files on the relay's own address (issue 29): what `vite build --mode phone` wrote
 * to build/phone/, under /app/, so a phone needs one HTTPS name for the app and its sync. The
 * files hold no data; every response carries the phone's Content-Security-Policy, since a worker
 * runs under the policy its own script is served with (docs/phone.md).
 */

/** The app's first page: Vite names it after its source (renderer/phone.html); index.html is taken if there is one. */
const ENTRY_FILES = ['index.html', 'phone.html'];

/** build/phone beside the relay's own build (build/server/…), whichever folder it was started from. */
export function phoneAppDir(): string {
  return join(packageRoot(), 'build', 'phone');
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  // Without it a browser will not compile the module while it downloads (instantiateStreaming).
  '.wasm': 'application/wasm',
  '.webmanifest': 'application/manifest+json',
  '.json': 'application/json',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
};
/** Already compressed formats gain nothing from another pass. */
const STORED_AS_IS = new Set(['.png', '.ico', '.woff2']);

const SECURITY_HEADERS = { ...PAGE_SECURITY_HEADERS, 'Content-Security-Policy': PHONE_CONTENT_SECURITY_POLICY };

type Encoding = 'br' | 'gzip';

const brotli = promisify(brotliCompress);
const gzipped = promisify(gzip);

/**
 * A file's bytes in one encoding. Brotli at quality 9, not 11: for sqlite3.wasm (879 KB) it was
 * 383 KB in 0.27 s and ~3.5 MB of memory, against 353 KB in 4.2 s and ~16 MB at 11; gzip -9 407 KB.
 */
function compress(bytes: Buffer, encoding: Encoding): Promise<Buffer> {
  if (encoding === 'gzip') return gzipped(bytes, { level: 9 });
  return brotli(bytes, { params: { [zlib.BROTLI_PARAM_QUALITY]: 9, [zlib.BROTLI_PARAM_SIZE_HINT]: bytes.length } });
}

/** The encoding a request accepts that the relay prefers (brotli, then gzip), or null. */
function acceptedEncoding(header: string | undefined): Encoding | null {
  const accepted = new Set<string>();
  for (const part of (header ?? '').split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
    if (name && (q === undefined || Number(q) > 0)) accepted.add(name);
  }
  return accepted.has('br') ? 'br' : accepted.has('gzip') ? 'gzip' : null;
}

/**
 * The file a path below /app/ names, or why not: `bad` for a path that tries to leave the folder
 * (`..`, an encoded slash or backslash, a NUL, undecodable escapes), `missing` for anything else
 * that is not a file there (dot files included).
 */
function resolveFile(root: string, rest: string): string | 'bad' | 'missing' {
  const names: string[] = [];
  for (const segment of rest.split('/')) {
    let name: string;
    try {
      name = decodeURIComponent(segment);
    } catch {
      return 'bad';
    }
    if (name === '..' || /[/\\\0]/.test(name)) return 'bad';
    if (name === '' || name.startsWith('.')) return 'missing';
    names.push(name);
  }
  let file: string;
  try {
    file = realpathSync(join(root, ...names));
  } catch {
    return 'missing';
  }
  // Also holds against a symbolic link in the folder that points out of it.
  return file.startsWith(realpathSync(root) + sep) ? file : 'missing';
}

/** Serves the phone app's files; `handle` answers any request whose path is /app or below it. */
export class PhoneAppFiles {
  /** Compressed bodies by file, encoding, size and time: a rebuilt file is compressed again. */
  private readonly compressed = new Map<string, { stamp: string; body: Promise<Buffer> }>();

  constructor(private readonly root: string = phoneAppDir()) {}

  /** True when the path is the app's (and the request is answered). */
  handle(req: IncomingMessage, res: ServerResponse, pathname: string): boolean {
    if (pathname === PHONE_APP_PATH.slice(0, -1)) {
      // Relative, so that behind a proxy at a path (/chyme/app) it stays below that path.
      const query = (req.url ?? '').indexOf('?');
      this.plain(res, 308, 'The phone app is at /app/.\n', { Location: `app/${query < 0 ? '' : (req.url ?? '').slice(query)}` });
      return true;
    }
    if (!pathname.startsWith(PHONE_APP_PATH)) return false;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      this.plain(res, 405, 'The phone app answers GET and HEAD only.\n', { Allow: 'GET, HEAD' });
      return true;
    }
    void this.serve(req, res, pathname.slice(PHONE_APP_PATH.length)).catch((err: unknown) => {
      if (res.headersSent) res.destroy();
      else this.plain(res, 500, `The relay could not read that file: ${(err as Error)?.message ?? String(err)}\n`);
    });
    return true;
  }

  private async serve(req: IncomingMessage, res: ServerResponse, rest: string): Promise<void> {
    if (!existsSync(this.root)) {
      this.plain(res, 404, `The phone app is not built next to this relay (${this.root}): run npm run build:renderer.\n`);
      return;
    }
    const file = rest === '' ? this.entry() : resolveFile(this.root, rest);
    if (file === 'bad') return this.plain(res, 400, 'That path is not one of the phone app’s files.\n');
    let stats: Stats | undefined;
    try {
      stats = file === 'missing' ? undefined : statSync(file);
    } catch {
      stats = undefined;
    }
    if (file === 'missing' || !stats?.isFile()) return this.plain(res, 404, 'No such file in the phone app.\n');

    const dot = file.lastIndexOf('.');
    const ext = dot > file.lastIndexOf(sep) ? file.slice(dot).toLowerCase() : '';
    const stamp = `${stats.size.toString(36)}-${Math.trunc(stats.mtimeMs).toString(36)}`;
    const encoding = STORED_AS_IS.has(ext) ? null : acceptedEncoding(req.headers['accept-encoding']);
    const etag = `"${stamp}${encoding ? `-${encoding}` : ''}"`;
    const headers: Record<string, string> = {
      ...SECURITY_HEADERS,
      'Content-Type': TYPES[ext] ?? 'application/octet-stream',
      // Vite's files under assets/ carry a hash of their content in their name: never fetched twice.
      // The page, the manifest, the icons and a service worker keep their names, so they are revalidated.
      'Cache-Control': rest.startsWith('assets/') ? 'public, max-age=31536000, immutable' : 'no-cache',
      ETag: etag,
    };
    if (!STORED_AS_IS.has(ext)) headers.Vary = 'Accept-Encoding';
    if (req.headers['if-none-match'] === etag) {
      res.writeHead(304, headers).end();
      return;
    }
    const body = encoding ? await this.compressedBody(file, stamp, encoding) : await readFile(file);
    if (encoding) headers['Content-Encoding'] = encoding;
    headers['Content-Length'] = String(body.length);
    res.writeHead(200, headers).end(req.method === 'HEAD' ? undefined : body);
  }

  private entry(): string | 'missing' {
    for (const name of ENTRY_FILES) if (existsSync(join(this.root, name))) return join(this.root, name);
    return 'missing';
  }

  private compressedBody(file: string, stamp: string, encoding: Encoding): Promise<Buffer> {
    const key = `${encoding} ${file}`;
    const cached = this.compressed.get(key);
    if (cached?.stamp === stamp) return cached.body;
    const body = readFile(file).then((bytes) => compress(bytes, encoding));
    // A failure is not kept: the next request tries again.
    body.catch(() => this.compressed.delete(key));
    this.compressed.set(key, { stamp, body });
    return body;
  }

  private plain(res: ServerResponse, status: number, text: string, extra: Record<string, string> = {}): void {
    res.writeHead(status, { ...SECURITY_HEADERS, 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store', ...extra }).end(text);
  }
}
