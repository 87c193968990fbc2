/**
 * End-to-end harness: a real `chyme serve` child process over a temporary database, and Debian's
 * Chromium driven by playwright-core. Nothing is downloaded: the browser is the system one
 * (CHROMIUM_PATH, default /usr/bin/chromium); when it is missing the e2e tests skip.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const RESULTS = join(ROOT, 'test-results');
const CLI = join(ROOT, 'build/server/cli/main.js');
const require = createRequire(import.meta.url);

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Why the e2e suite cannot run here, or null when it can. */
export function skipReason(): string | null {
  if (!existsSync(CHROMIUM)) return `no Chromium at ${CHROMIUM} (set CHROMIUM_PATH)`;
  if (!existsSync(CLI)) return 'build/server/cli/main.js is missing: run `npm run build` first';
  if (!existsSync(join(ROOT, 'build/renderer/index.html'))) return 'build/renderer is missing: run `npm run build` first';
  return null;
}

export interface Server {
  url: string;
  appUrl: string;
  dir: string;
  dbPath: string;
  /** Set when started with a test clock: rewrite it to move the service's "now". */
  clockFile: string | undefined;
  setClock(ms: number): void;
  proc: ChildProcess;
  output: () => string;
  /** A key with every scope, for seeding and checking through the API. */
  key: string;
  api<T = unknown>(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: T; headers: Headers }>;
  stop(): Promise<void>;
}

export interface ServerOptions {
  /** Start the service's clock at this instant (epoch ms) via CHYME_TEST_CLOCK_FILE. */
  clockMs?: number;
  tz?: string;
  /** Reuse a database directory (e.g. one seeded before). */
  dir?: string;
}

/** Starts `chyme serve --port 0` and waits for its "Chyme listening on" and "App:" lines. */
export async function startServer(opts: ServerOptions = {}): Promise<Server> {
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'chyme-e2e-'));
  const dbPath = join(dir, 'chyme.db');
  const env: NodeJS.ProcessEnv = { ...process.env };
  let clockFile: string | undefined;
  if (opts.clockMs !== undefined) {
    clockFile = join(dir, 'clock.txt');
    writeFileSync(clockFile, String(opts.clockMs));
    env.CHYME_TEST_CLOCK_FILE = clockFile;
  }
  const args = [CLI, 'serve', '--port', '0', '--db', dbPath, '--tz', opts.tz ?? 'UTC'];
  const proc = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  proc.stderr!.setEncoding('utf8').on('data', (d: string) => (out += d));

  const { url, appUrl } = await new Promise<{ url: string; appUrl: string }>((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error(`chyme serve did not start in 20 s:\n${out}`)), 20_000);
    const check = () => {
      const listening = /Chyme listening on (http:\/\/\S+)/.exec(out);
      const app = /App: (http:\/\/\S+)/.exec(out);
      if (listening && app) {
        clearTimeout(timer);
        proc.stdout!.off('data', check);
        resolvePromise({ url: listening[1]!, appUrl: app[1]! });
      }
    };
    proc.stdout!.on('data', check);
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`chyme serve exited with ${code}:\n${out}`));
    });
  });

  // A full-scope key for seeding, created through the CLI like a user would.
  const created = spawnSync(process.execPath, [CLI, 'keys', 'create', '--name', 'e2e', '--scopes', 'all', '--db', dbPath], {
    encoding: 'utf8',
    env,
  });
  if (created.status !== 0) throw new Error(`keys create failed: ${created.stderr}`);
  const key = created.stdout.trim().split('\n').pop()!.trim();

  const server: Server = {
    url,
    appUrl,
    dir,
    dbPath,
    clockFile,
    setClock(ms) {
      if (!clockFile) throw new Error('server started without a test clock');
      writeFileSync(clockFile, String(ms));
    },
    proc,
    output: () => out,
    key,
    async api(method, path, body, headers = {}) {
      const res = await fetch(url + path, {
        method,
        headers: {
          Authorization: `Bearer ${key}`,
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
          ...headers,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        /* not JSON (CSV) */
      }
      return { status: res.status, body: parsed as never, headers: res.headers };
    },
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) {
        const exited = new Promise((r) => proc.once('exit', r));
        proc.kill('SIGTERM');
        const t = setTimeout(() => proc.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(t);
      }
      if (!opts.dir) rmSync(dir, { recursive: true, force: true });
    },
  };
  return server;
}

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}

export interface AppPage {
  context: BrowserContext;
  page: Page;
  /** Console errors and CSP violations seen on the page. */
  problems: string[];
}

/**
 * Opens the app through the server's one-time link (a fresh link per context: each works once),
 * in the given color scheme.
 */
const sessions = new Map<Server, Awaited<ReturnType<BrowserContext['cookies']>>>();

export async function openApp(browser: Browser, server: Server, opts: { colorScheme?: 'light' | 'dark'; viewport?: { width: number; height: number } } = {}): Promise<AppPage> {
  const context = await browser.newContext({
    colorScheme: opts.colorScheme ?? 'light',
    viewport: opts.viewport ?? { width: 1280, height: 860 },
    deviceScaleFactor: 1,
    acceptDownloads: true,
    timezoneId: 'UTC',
    locale: 'en-GB',
  });
  // The App link works once; later contexts reuse the session cookie it was exchanged for.
  if (sessions.has(server)) await context.addCookies(sessions.get(server)!);
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(String(e)));
  if (sessions.has(server)) {
    await page.goto(server.url + '/');
  } else {
    await page.goto(server.appUrl);
    sessions.set(server, await context.cookies());
  }
  return { context, page, problems };
}

const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[]; failureSummary?: string }[];
}

/** Runs axe-core on the page; returns violations of impact serious or critical. */
export async function axe(page: Page): Promise<AxeViolation[]> {
  // Evaluated through the DevTools protocol, which the page's CSP does not govern (a <script> tag
  // would be blocked by script-src 'self', as it should be).
  if (!(await page.evaluate(() => 'axe' in globalThis))) await page.evaluate(AXE);
  // (The page's globals, typed here without the DOM library.)
  const result = await page.evaluate(async () => {
    const g = globalThis as unknown as { document: unknown; axe: { run: (ctx: unknown, opts: unknown) => Promise<{ violations: AxeViolation[] }> } };
    return g.axe.run(g.document, { resultTypes: ['violations'] });
  });
  return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

export function formatViolations(vs: AxeViolation[]): string {
  return vs.map((v) => `${v.impact} ${v.id}: ${v.help}\n  ${v.nodes.slice(0, 5).map((n) => n.target.join(' ') + (n.failureSummary ? ` — ${n.failureSummary.split('\n').join(' ')}` : '')).join('\n  ')}`).join('\n');
}

export function resultsDir(...parts: string[]): string {
  const d = join(RESULTS, ...parts);
  mkdirSync(d, { recursive: true });
  return d;
}

/** Waits until the Today screen has rendered its dial. */
export async function waitForToday(page: Page): Promise<void> {
  await page.waitForSelector('[data-testid="today"] [data-testid="dial-state"]', { timeout: 15_000 });
}

export const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
