/**
 * The relay's HTTP side beyond sync (issue 29): the phone app at /app/ (build/phone, as `npm run
 * build:renderer` writes it), HTTPS and wss:// with --tls-cert/--tls-key, and the pairing URL of
 * GET /v1/sync/pairing-code. Real `chyme relay` and `chyme serve` processes on 127.0.0.1; raw
 * node:http(s) requests, so that the bytes on the wire (encodings, headers) are what is checked.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { PHONE_CONTENT_SECURITY_POLICY } from '../../server/content-security.js';
import { startRelay } from '../../server/sync/relay.js';
import { CLI, ROOT, runCliAsync } from '../helpers/cli.js';
import { pair, startDevice, until, type Device, type RelayProcess } from '../helpers/sync.js';
import { selfSignedCertificate } from '../helpers/tls.js';
import { launchBrowser, skipReason } from '../e2e/harness.js';

const TIMEOUT = { timeout: 120_000 };
const PHONE_DIR = join(ROOT, 'build', 'phone');
const tempDir = () => mkdtempSync(join(tmpdir(), 'chyme-relay-app-'));

interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** One request with the path sent exactly as given (no client-side normalising of `..`). */
function get(base: string, path: string, options: { method?: string; headers?: Record<string, string>; ca?: string } = {}): Promise<Reply> {
  const url = new URL(base);
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(
      { host: url.hostname, port: url.port, path, method: options.method ?? 'GET', headers: options.headers ?? {}, ...(options.ca ? { ca: options.ca } : {}) },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

interface Relay {
  child: ChildProcess;
  url: string;
  token: string;
  http: string;
  stop(): Promise<number | null>;
}

/** `chyme relay` with extra flags, once it printed its two lines. */
async function startRelayProcess(dataDir: string, args: string[] = []): Promise<Relay> {
  const child = spawn(process.execPath, [CLI, 'relay', '--port', '0', '--data', dataDir, ...args], { env: { ...process.env, CHYME_RELAY_TOKEN: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (out += c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (err += c));
  const exited = once(child, 'exit');
  const m = await Promise.race([
    until('the two lines of chyme relay', () => /^Chyme relay listening on (wss?:\/\/\S+)\nToken: (\S+)\n/.exec(out) ?? undefined),
    exited.then(([code]) => {
      throw new Error(`chyme relay exited with ${code}: ${out}\n${err}`);
    }),
  ]);
  return {
    child,
    url: m[1]!,
    token: m[2]!,
    http: m[1]!.replace(/^ws/, 'http'),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      const [code] = (await exited) as [number | null];
      return code;
    },
  };
}

/** The phone build's files, which these tests serve: they fail, rather than pass on nothing, when it was not built. */
function phoneFile(pattern: RegExp): string {
  const assets = readdirSync(join(PHONE_DIR, 'assets'));
  const name = assets.find((n) => pattern.test(n));
  assert.ok(name, `build/phone/assets holds no file like ${pattern}: run npm run build:renderer first`);
  return `assets/${name}`;
}

const ENTRY = ['index.html', 'phone.html'].find((n) => {
  try {
    readFileSync(join(PHONE_DIR, n));
    return true;
  } catch {
    return false;
  }
});

function assertPhoneHeaders(r: Reply, what: string): void {
  assert.equal(r.headers['content-security-policy'], PHONE_CONTENT_SECURITY_POLICY, `${what}: the phone's CSP`);
  assert.equal(r.headers['x-content-type-options'], 'nosniff', what);
}

describe('the phone app at /app/ on a plain relay', () => {
  let relay: Relay;
  before(async () => {
    assert.ok(ENTRY, 'build/phone has no index.html or phone.html: run npm run build:renderer first');
    relay = await startRelayProcess(join(tempDir(), 'relay'));
  });
  after(async () => {
    assert.equal(await relay?.stop(), 0);
  });

  test('/app redirects to /app/, which is the phone page with the phone CSP and no long cache', TIMEOUT, async () => {
    const bare = await get(relay.http, '/app?x=1');
    assert.equal(bare.status, 308);
    assert.equal(new URL(bare.headers.location!, `${relay.http}/app?x=1`).href, `${relay.http}/app/?x=1`);
    assertPhoneHeaders(bare, 'the redirect');

    const page = await get(relay.http, '/app/');
    assert.equal(page.status, 200);
    assert.equal(page.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(page.headers['cache-control'], 'no-cache');
    assertPhoneHeaders(page, 'the page');
    assert.deepEqual(page.body, readFileSync(join(PHONE_DIR, ENTRY!)));

    // Revalidation: the same page is not sent twice.
    const again = await get(relay.http, '/app/', { headers: { 'if-none-match': page.headers.etag! } });
    assert.equal(again.status, 304);
    assert.equal(again.body.length, 0);
    assertPhoneHeaders(again, 'a 304');

    const head = await get(relay.http, '/app/', { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.body.length, 0);
    assert.equal(head.headers['content-length'], String(page.body.length));
  });

  test('the WebAssembly is application/wasm, cacheable for good, and compressed as sent (brotli, gzip, or as is)', TIMEOUT, async () => {
    const path = phoneFile(/\.wasm$/);
    const raw = readFileSync(join(PHONE_DIR, path));
    const br = await get(relay.http, `/app/${path}`, { headers: { 'accept-encoding': 'gzip, deflate, br' } });
    assert.equal(br.status, 200);
    assert.equal(br.headers['content-type'], 'application/wasm');
    assert.equal(br.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.equal(br.headers['content-encoding'], 'br');
    assert.equal(br.headers.vary, 'Accept-Encoding');
    assertPhoneHeaders(br, 'the wasm');
    assert.ok(br.body.length < raw.length * 0.6, `brotli sent ${br.body.length} bytes of ${raw.length}`);
    assert.deepEqual(brotliDecompressSync(br.body), raw);

    const gz = await get(relay.http, `/app/${path}`, { headers: { 'accept-encoding': 'gzip' } });
    assert.equal(gz.headers['content-encoding'], 'gzip');
    assert.deepEqual(gunzipSync(gz.body), raw);

    // br refused with q=0: gzip.
    const noBr = await get(relay.http, `/app/${path}`, { headers: { 'accept-encoding': 'br;q=0, gzip;q=0.5' } });
    assert.equal(noBr.headers['content-encoding'], 'gzip');

    const plain = await get(relay.http, `/app/${path}`);
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.deepEqual(plain.body, raw);
    // Each representation has its own validator.
    assert.notEqual(plain.headers.etag, br.headers.etag);
  });

  test('scripts are text/javascript and the page names only files the relay serves', TIMEOUT, async () => {
    const page = (await get(relay.http, '/app/')).body.toString('utf8');
    const refs = [...page.matchAll(/(?:src|href)="\.\/([^"]+)"/g)].map((m) => m[1]!);
    assert.ok(refs.some((r) => r.endsWith('.js')), `the page loads a script: ${page}`);
    for (const ref of refs) {
      const r = await get(relay.http, `/app/${ref}`, { headers: { 'accept-encoding': 'gzip' } });
      assert.equal(r.status, 200, ref);
      assertPhoneHeaders(r, ref);
      if (ref.endsWith('.js')) assert.equal(r.headers['content-type'], 'text/javascript; charset=utf-8', ref);
      if (ref.endsWith('.css')) assert.equal(r.headers['content-type'], 'text/css; charset=utf-8', ref);
      if (ref.endsWith('.webmanifest')) assert.equal(r.headers['content-type'], 'application/manifest+json', ref);
      if (ref.endsWith('.png')) assert.equal(r.headers['content-type'], 'image/png', ref);
      if (ref.endsWith('.svg')) assert.equal(r.headers['content-type'], 'image/svg+xml', ref);
    }
  });

  test('the app is installable: its manifest opens /app/ standalone, with PNG icons of 192 and 512 px served as declared', TIMEOUT, async () => {
    const page = (await get(relay.http, '/app/')).body.toString('utf8');
    const href = /<link rel="manifest" href="([^"]+)"/.exec(page)?.[1];
    assert.ok(href, 'the page links a manifest');
    const manifestUrl = new URL(href, `${relay.http}/app/`);
    const r = await get(relay.http, manifestUrl.pathname);
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'application/manifest+json');
    const manifest = JSON.parse(r.body.toString('utf8')) as { name: string; display: string; start_url: string; scope: string; icons: Array<{ src: string; sizes: string; type: string; purpose?: string }> };
    assert.equal(manifest.display, 'standalone');
    assert.equal(new URL(manifest.start_url, manifestUrl).pathname, '/app/');
    assert.equal(new URL(manifest.scope, manifestUrl).pathname, '/app/');
    for (const size of ['192x192', '512x512']) assert.ok(manifest.icons.some((i) => i.sizes === size && i.type === 'image/png'), `a ${size} PNG icon`);
    for (const icon of manifest.icons) {
      const file = await get(relay.http, new URL(icon.src, manifestUrl).pathname);
      assert.equal(file.status, 200, icon.src);
      assert.equal(file.headers['content-type'], icon.type, icon.src);
      if (icon.type === 'image/png') {
        // The PNG header's width and height (IHDR) are the declared size.
        assert.equal(`${file.body.readUInt32BE(16)}x${file.body.readUInt32BE(20)}`, icon.sizes, icon.src);
      }
    }
  });

  test('paths that leave the folder are refused; nothing outside build/phone is served', TIMEOUT, async () => {
    const secret = readFileSync(join(ROOT, 'package.json'), 'utf8');
    const attempts: Array<[string, number]> = [
      ['/app/..%2f..%2fpackage.json', 400],
      ['/app/assets/..%2F..%2F..%2Fpackage.json', 400],
      ['/app/..%5c..%5cpackage.json', 400],
      ['/app/%2e%2e%2f%2e%2e%2fpackage.json', 400],
      ['/app/x%00.js', 400],
      ['/app/%E0%A4%A', 400],
      ['/app/.env', 404],
      ['/app/assets/', 404],
      ['/app/no-such-file.js', 404],
    ];
    for (const [path, status] of attempts) {
      const r = await get(relay.http, path);
      assert.equal(r.status, status, path);
      assertPhoneHeaders(r, path);
      assert.ok(!r.body.toString('utf8').includes('"name": "chyme"'), `${path} leaked package.json`);
    }
    // A client that sends `..` unencoded: the URL is normalised to /package.json, not an app path at all.
    const dotted = await get(relay.http, '/app/../package.json');
    assert.notEqual(dotted.status, 200);
    assert.ok(!dotted.body.toString('utf8').includes(secret.slice(0, 40)));
    const post = await get(relay.http, '/app/', { method: 'POST' });
    assert.equal(post.status, 405);
    assert.equal(post.headers.allow, 'GET, HEAD');
  });

  test('the rest of the HTTP surface is as before: /health, 426 elsewhere', TIMEOUT, async () => {
    const health = await get(relay.http, '/health');
    assert.equal(health.status, 200);
    assert.equal(health.body.toString(), '{"ok":true}');
    for (const path of ['/', '/apps', '/application', '/v1/sync']) {
      const r = await get(relay.http, path);
      assert.equal(r.status, 426, path);
      assert.match(r.body.toString(), /^This is a Chyme sync relay; it speaks WebSocket only/);
    }
  });
});

test('Chromium opens /app/ from the relay: installable, every file compressed, no console error, and the worker opens its SQLite-WASM database under the relay\'s CSP', { ...TIMEOUT, skip: skipReason() ?? false }, async () => {
  const relay = await startRelayProcess(join(tempDir(), 'relay'));
  const browser = await launchBrowser();
  try {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    const page = await context.newPage();
    const problems: string[] = [];
    const responses: string[] = [];
    page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
    page.on('pageerror', (e) => problems.push(e.message));
    page.on('response', (r) => responses.push(`${r.status()} ${new URL(r.url()).pathname} ${r.headers()['content-encoding'] ?? 'identity'}`));
    await page.goto(`${relay.http}/app`);
    assert.equal(new URL(page.url()).pathname, '/app/');
    // The spike's page (renderer/src/phone/main.ts) says when its worker has the database open.
    await page.waitForFunction(() => (globalThis as unknown as { chymeStorage?: { state: string } }).chymeStorage?.state === 'ready', null, { timeout: 60_000 });
    const cdp = await context.newCDPSession(page);
    const { installabilityErrors } = (await cdp.send('Page.getInstallabilityErrors')) as { installabilityErrors: Array<{ errorId: string }> };
    // A Playwright context is incognito-like; that is the browser's state, not the app's.
    assert.deepEqual(installabilityErrors.map((e) => e.errorId).filter((id) => id !== 'in-incognito'), []);
    assert.deepEqual(problems, []);
    assert.ok(responses.some((r) => /^200 \/app\/assets\/sqlite3-[^ ]+\.wasm br$/.test(r)), responses.join('\n'));
    for (const r of responses.filter((line) => !/^30[78] /.test(line))) assert.match(r, /^200 \/app\/\S* (br|identity)$/);
    for (const r of responses.filter((line) => /\.(js|wasm|webmanifest) /.test(line))) assert.match(r, / br$/, 'scripts, WebAssembly and the manifest arrive compressed');
    await context.close();
  } finally {
    await browser.close();
    assert.equal(await relay.stop(), 0);
  }
});

test('a symbolic link in the app folder that points out of it is not followed', TIMEOUT, async () => {
  const dir = tempDir();
  const app = join(dir, 'phone');
  mkdirSync(app);
  writeFileSync(join(dir, 'outside.txt'), 'private');
  writeFileSync(join(app, 'index.html'), '<!doctype html><title>x</title>');
  symlinkSync(join(dir, 'outside.txt'), join(app, 'leak.txt'));
  const relay = await startRelay({ port: 0, dataDir: join(dir, 'relay'), phoneAppDir: app });
  try {
    const base = relay.url.replace(/^ws/, 'http');
    assert.equal((await get(base, '/app/')).status, 200);
    const leak = await get(base, '/app/leak.txt');
    assert.equal(leak.status, 404);
    assert.ok(!leak.body.toString().includes('private'));
  } finally {
    await relay.close();
  }
});

describe('HTTPS and wss:// with --tls-cert and --tls-key', () => {
  const dir = tempDir();
  const cert = selfSignedCertificate('relay.test', 'DNS:relay.test,IP:127.0.0.1');
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  writeFileSync(certFile, cert.cert);
  writeFileSync(keyFile, cert.key, { mode: 0o600 });
  let relay: Relay;
  const devices: Device[] = [];
  before(async () => {
    relay = await startRelayProcess(join(dir, 'relay'), ['--host', '127.0.0.1', '--tls-cert', certFile, '--tls-key', keyFile]);
  });
  after(async () => {
    await Promise.all(devices.map((d) => d.stop()));
    assert.equal(await relay?.stop(), 0);
  });

  test('the relay prints a wss:// address and serves the app and /health over HTTPS only', TIMEOUT, async () => {
    assert.match(relay.url, /^wss:\/\/127\.0\.0\.1:\d+$/);
    const page = await get(relay.http, '/app/', { ca: cert.cert });
    assert.equal(page.status, 200);
    assertPhoneHeaders(page, 'the page over HTTPS');
    assert.equal((await get(relay.http, '/health', { ca: cert.cert })).status, 200);
    // Plain HTTP to the TLS port gets no answer of the app.
    const plain = await get(relay.http.replace('https:', 'http:'), '/app/').catch((err: Error) => err);
    assert.ok(plain instanceof Error || plain.status === 400, `plain HTTP on the TLS port: ${plain instanceof Error ? plain.message : plain.status}`);
    // A client that does not trust the certificate is refused by its own TLS check.
    await assert.rejects(get(relay.http, '/health'), /self[- ]signed|unable to verify|certificate/i);
  });

  test('two devices sync a meal over wss://, and the pairing URL is https://…/app/#pair=CODE', TIMEOUT, async () => {
    const env = { NODE_EXTRA_CA_CERTS: certFile };
    const a = await startDevice(dir, 'desk', env);
    const b = await startDevice(dir, 'laptop', env);
    devices.push(a, b);
    const code = await pair({ url: relay.url, token: relay.token } as RelayProcess, a, b);
    const pairing = await a.api('GET', '/v1/sync/pairing-code');
    assert.equal(pairing.status, 200);
    assert.equal(pairing.json.pairing_code, code);
    assert.equal(pairing.json.url, `${relay.http}/app/#pair=${code}`);

    const meal = await a.api('POST', '/v1/nutrition/meals', { timestamp: new Date(Date.now() - 3600_000).toISOString(), meal_type: 'lunch', description: 'soup over TLS', macros: { calories: 320 } });
    assert.equal(meal.status, 201, JSON.stringify(meal.json));
    await until('the meal on the other device', async () => (await b.api('GET', `/v1/nutrition/meals/${meal.json.id}`)).status === 200, 30_000);
    const status = await b.api('GET', '/v1/sync');
    assert.equal(status.json.relay, relay.url);
    assert.equal(status.json.connected, true);
  });
});

describe('--tls-cert and --tls-key that cannot work: one sentence, exit status 2', () => {
  const dir = tempDir();
  const one = selfSignedCertificate('one.test', 'DNS:one.test');
  const other = selfSignedCertificate('other.test', 'DNS:other.test');
  const files = {
    cert: join(dir, 'cert.pem'),
    key: join(dir, 'key.pem'),
    otherKey: join(dir, 'other-key.pem'),
    garbage: join(dir, 'garbage.pem'),
    encryptedKey: join(dir, 'encrypted-key.pem'),
  };
  writeFileSync(files.cert, one.cert);
  writeFileSync(files.key, one.key);
  writeFileSync(files.otherKey, other.key);
  writeFileSync(files.garbage, 'not a pem file\n');
  execFileSync('openssl', ['pkey', '-in', files.key, '-aes256', '-passout', 'pass:a passphrase', '-out', files.encryptedKey], { stdio: 'pipe' });
  const cases: Array<[string, string[], RegExp]> = [
    ['a certificate file that does not exist', ['--tls-cert', join(dir, 'missing.pem'), '--tls-key', files.key], /^chyme: Cannot read the TLS certificate .*missing\.pem \(ENOENT\): check --tls-cert\.\n$/],
    ['a key file that cannot be read (a folder)', ['--tls-cert', files.cert, '--tls-key', dir], /^chyme: Cannot read the TLS key .* \(EISDIR\): check --tls-key\.\n$/],
    ['a key that belongs to another certificate', ['--tls-cert', files.cert, '--tls-key', files.otherKey], /^chyme: The TLS key .*other-key\.pem does not belong to the certificate .*cert\.pem: give the key the certificate was made for\.\n$/],
    ['a certificate that is not PEM', ['--tls-cert', files.garbage, '--tls-key', files.key], /^chyme: .*garbage\.pem is not a PEM certificate/],
    ['a key that is not PEM', ['--tls-cert', files.cert, '--tls-key', files.garbage], /^chyme: .*garbage\.pem is not a PEM private key: check --tls-key\.\n$/],
    ['a key encrypted with a passphrase', ['--tls-cert', files.cert, '--tls-key', files.encryptedKey], /^chyme: .*encrypted-key\.pem is an encrypted private key; give the relay an unencrypted one \(openssl pkey -in .*\)\.\n$/],
    ['a certificate without its key', ['--tls-cert', files.cert], /^chyme: --tls-cert and --tls-key go together/],
  ];
  for (const [what, args, message] of cases) {
    test(what, TIMEOUT, async () => {
      const r = await runCliAsync(['relay', '--port', '0', '--data', join(dir, 'relay'), ...args], { CHYME_RELAY_TOKEN: '' });
      assert.equal(r.status, 2, r.stderr);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, message);
    });
  }
});

describe('GET /v1/sync/pairing-code', () => {
  const dir = tempDir();
  let relay: Relay;
  let a: Device;
  before(async () => {
    relay = await startRelayProcess(join(dir, 'relay'));
    a = await startDevice(dir, 'desk');
  });
  after(async () => {
    await a?.stop();
    assert.equal(await relay?.stop(), 0);
  });

  test('409 while sync is off; for an admin key the code and the http://…/app/#pair=CODE address of a ws:// relay; 403 without admin', TIMEOUT, async () => {
    const off = await a.api('GET', '/v1/sync/pairing-code');
    assert.equal(off.status, 409);
    assert.equal(off.json.error.code, 'sync_not_enabled');

    await pair({ url: relay.url, token: relay.token } as RelayProcess, a);
    const on = await a.api('GET', '/v1/sync/pairing-code');
    assert.equal(on.status, 200);
    assert.deepEqual(Object.keys(on.json).sort(), ['object', 'pairing_code', 'url']);
    assert.equal(on.json.object, 'sync.pairing_code');
    assert.match(on.json.pairing_code, /^chyme-sync:v2:[A-Z2-7]+$/);
    assert.equal(on.json.url, `${relay.http}/app/#pair=${on.json.pairing_code}`);
    // The code is in the fragment: what a browser sends to the relay is /app/ alone.
    assert.equal(new URL(on.json.url).pathname, '/app/');
    assert.equal(new URL(on.json.url).search, '');

    const created = await a.api('POST', '/v1/api_keys', { name: 'reader', scopes: ['nutrition:read', 'nutrition:write', 'sleep:read', 'sleep:write', 'digestion:read', 'webhooks:read', 'webhooks:write'] });
    assert.equal(created.status, 201, JSON.stringify(created.json));
    const denied = await fetch(`${a.url}/v1/sync/pairing-code`, { headers: { authorization: `Bearer ${created.json.secret}` } });
    assert.equal(denied.status, 403);
    assert.ok(!(await denied.text()).includes('chyme-sync:'));
  });
});
