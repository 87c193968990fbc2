/**
 * End-to-end harness: a real `chyme serve` child process over a temporary database, and Debian's
 * Chromium driven by playwright-core. Nothing is downloaded: the browser is the system one
 * (CHROMIUM_PATH, default /usr/bin/chromium); when it is missing the e2e tests skip.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { prng } from '../helpers/random.js';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const RESULTS = join(ROOT, 'test-results');
export const CLI = join(ROOT, 'build/server/cli/main.js');
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
  /** The service's "now": its test clock when it has one, else the real time. */
  now(): number;
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
  /** Another build's CLI (a benchmark's before/after runs: its renderer is served too). */
  cli?: string;
}

/** Starts `chyme serve --port 0` and waits for its "Chyme listening on" and "App:" lines. */
export async function startServer(opts: ServerOptions = {}): Promise<Server> {
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'chyme-e2e-'));
  const dbPath = join(dir, 'chyme.db');
  const env: NodeJS.ProcessEnv = { ...process.env };
  let clockFile: string | undefined;
  let clockSet = { ms: Date.now(), at: Date.now() };
  if (opts.clockMs !== undefined) {
    clockSet = { ms: opts.clockMs, at: Date.now() };
    clockFile = join(dir, 'clock.txt');
    writeFileSync(clockFile, String(opts.clockMs));
    env.CHYME_TEST_CLOCK_FILE = clockFile;
  }
  const cli = opts.cli ?? CLI;
  const args = [cli, 'serve', '--port', '0', '--db', dbPath, '--tz', opts.tz ?? 'UTC'];
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
  const created = spawnSync(process.execPath, [cli, 'keys', 'create', '--name', 'e2e', '--scopes', 'all', '--db', dbPath], {
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
      // Whole or not at all (the service reads the file at every "now"): written aside, then renamed.
      writeFileSync(`${clockFile}.tmp`, String(ms));
      renameSync(`${clockFile}.tmp`, clockFile);
      clockSet = { ms, at: Date.now() };
    },
    now: () => clockSet.ms + (Date.now() - clockSet.at),
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

const LOCK = join(tmpdir(), 'chyme-e2e-browser.lock');

function lockHolderAlive(): boolean {
  try {
    const pid = Number(readFileSync(join(LOCK, 'pid'), 'utf8'));
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * One browser-driving e2e file at a time: `npm test` runs two test files at once, and two
 * Chromiums plus two services on a small machine make each other's timings (and the performance
 * budgets) meaningless. A directory is the lock (mkdir is atomic); a dead holder's lock is taken
 * over. Released by closing the browser.
 */
async function acquireBrowserLock(): Promise<() => void> {
  for (;;) {
    try {
      mkdirSync(LOCK);
      writeFileSync(join(LOCK, 'pid'), String(process.pid));
      return () => rmSync(LOCK, { recursive: true, force: true });
    } catch {
      // Just created by another process (no pid yet), or held: wait, unless its holder is gone.
      await new Promise((r) => setTimeout(r, 500));
      if (existsSync(join(LOCK, 'pid')) && !lockHolderAlive()) rmSync(LOCK, { recursive: true, force: true });
    }
  }
}

/** `args`: Chromium switches of the caller's own (the phone's QR test feeds the fake camera a file). */
export async function launchBrowser(args: string[] = []): Promise<Browser> {
  const release = await acquireBrowserLock();
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', ...args],
  }).catch((err: unknown) => {
    release();
    throw err;
  });
  browser.on('disconnected', release);
  return browser;
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

export async function openApp(
  browser: Browser,
  server: Server,
  opts: {
    colorScheme?: 'light' | 'dark';
    viewport?: { width: number; height: number };
    /** Start the browser's own clock at this instant (epoch ms); it then runs on, and `page.clock` moves it. */
    clockMs?: number;
  } = {},
): Promise<AppPage> {
  const context = await browser.newContext({
    colorScheme: opts.colorScheme ?? 'light',
    viewport: opts.viewport ?? { width: 1280, height: 860 },
    deviceScaleFactor: 1,
    acceptDownloads: true,
    timezoneId: 'UTC',
    locale: 'en-GB',
  });
  // The browser's clock starts here and runs on; context.clock moves it (fastForward, setSystemTime).
  if (opts.clockMs !== undefined) await context.clock.install({ time: opts.clockMs });
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

/**
 * Runs axe-core on the page: the rules of WCAG 2.0, 2.1 and 2.2 at levels A and AA, and axe's best
 * practices; returns every violation, whatever its impact. The tags are named because axe's
 * default run leaves out `target-size` (WCAG 2.2's 2.5.8, targets of at least 24 × 24 px).
 */
export async function axe(page: Page): Promise<AxeViolation[]> {
  // Evaluated through the DevTools protocol, which the page's CSP does not govern (a <script> tag
  // would be blocked by script-src 'self', as it should be).
  if (!(await page.evaluate(() => 'axe' in globalThis))) await page.evaluate(AXE);
  // Colours are checked as they settle: a theme switched just before (emulateMedia) starts the
  // buttons' background transitions, and mid-way a dark text sits on a light background.
  await page.evaluate(async () => {
    const doc = (globalThis as unknown as { document: { getAnimations(): Array<{ finished: Promise<unknown> }> } }).document;
    await Promise.all(doc.getAnimations().map((a) => a.finished.catch(() => undefined)));
  });
  // (The page's globals, typed here without the DOM library.)
  const result = await page.evaluate(async (tags) => {
    const g = globalThis as unknown as { document: unknown; axe: { run: (ctx: unknown, opts: unknown) => Promise<{ violations: AxeViolation[] }> } };
    return g.axe.run(g.document, { resultTypes: ['violations'], runOnly: { type: 'tag', values: tags } });
  }, AXE_TAGS);
  return result.violations;
}

const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'];

/**
 * Dismisses every note (toast) on the page, one by one, as a person would, rather than waiting
 * them out (9 s with an Undo). A note that leaves by itself meanwhile counts as dismissed.
 */
export async function dismissToasts(page: Page): Promise<void> {
  const toasts = page.getByTestId('toast');
  for (let n = await toasts.count(); n > 0; n = await toasts.count()) {
    await toasts.first().getByRole('button', { name: 'Dismiss' }).click({ timeout: 5_000 }).catch(() => undefined);
    await until(async () => (await toasts.count()) < n, 'a note dismissed');
  }
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

/** Polls `fn` until it returns something truthy (the service and the page settle on their own time). */
export async function until<T>(fn: () => Promise<T | undefined | false> | T | undefined | false, what: string, timeoutMs = 15_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

type DomGlobal = { document: { activeElement: { getAttribute(n: string): string | null; tagName: string } | null } };
/** An attribute of the focused element, or null. */
export const activeAttr = (page: Page, name: string) =>
  page.evaluate((n) => (globalThis as unknown as DomGlobal).document.activeElement?.getAttribute(n) ?? null, name);

/**
 * With focus in the search box: types `query`, waits for an option whose text matches `want`, moves
 * to it with the arrow keys and picks it with Enter. Returns the picked option's text. With
 * `first`, the wanted food must be the first option (Enter alone picks it); `shot` saves a screenshot.
 */
export async function pickFood(page: Page, query: string, want: RegExp, { first = false, shot }: { first?: boolean; shot?: string } = {}): Promise<string> {
  assert.equal(await activeAttr(page, 'role'), 'combobox', 'focus is in the search box');
  await page.keyboard.type(query, { delay: 25 });
  const list = page.getByTestId('food-options');
  const options = list.getByRole('option');
  // The list is for what was typed (its label says so) and not waiting for a newer answer.
  const texts = await until(async () => {
    if ((await list.getAttribute('aria-label')) !== `Foods matching “${query}”` || (await list.getAttribute('aria-busy')) === 'true') return undefined;
    const all = await options.allInnerTexts();
    return all.some((t) => want.test(t)) ? all : undefined;
  }, `an option matching ${want} for “${query}”`);
  const index = texts.findIndex((t) => want.test(t));
  if (first) assert.equal(index, 0, `the first option for “${query}”: ${texts.join(' | ')}`);
  if (shot) await page.screenshot({ path: shot, fullPage: true });
  // The first match is active as soon as results arrive; arrows move from there.
  await until(async () => (await activeAttr(page, 'aria-activedescendant')) !== null, 'an active option');
  for (let i = 0; i < index; i++) await page.keyboard.press('ArrowDown');
  const activeId = await activeAttr(page, 'aria-activedescendant');
  const activeText = await page.locator(`[id="${activeId}"]`).innerText();
  assert.match(activeText, want, 'the arrows reached the wanted food');
  await page.keyboard.press('Enter');
  return activeText;
}

/**
 * Picks a radio of a segmented switch and waits until it shows as picked. The app switches ranges and
 * views in a transition (the old picture stays while the new one renders), so on a loaded machine
 * the radio can turn checked only after Playwright's own `check()` has looked.
 */
export async function choose(radio: Locator): Promise<void> {
  await radio.click();
  await until(() => radio.isChecked(), 'the switch to take the choice');
}

/** Every main screen and what shows it is drawn: the every-screen checks and the screenshot tool walk this list. */
export const SCREENS: { name: string; hash: string; ready: string }[] = [
  { name: 'today', hash: '#/today', ready: '[data-testid="dial-state"]' },
  { name: 'log-meal', hash: '#/log', ready: '[data-testid="recent"]' },
  { name: 'gut-score', hash: '#/score', ready: '[data-testid="trend-chart"] .recharts-surface' },
  { name: 'timeline-day', hash: '#/timeline', ready: '[data-testid="timeline-day"] [data-testid="timeline-bar"]' },
  { name: 'timeline-week', hash: '#/timeline?view=week', ready: '[data-testid="timeline-week"] .phase--fed' },
  { name: 'import', hash: '#/import', ready: '[data-testid="past-imports"] :is(.empty, .import-list)' },
  { name: 'integrations', hash: '#/integrations', ready: '[data-testid="webhook-row"]' },
];

export const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/**
 * A fixed time of today's UTC date, where the browser tests start the service's clock: a test that
 * moves the clock on by hours, or logs meals at set times of the day, stays on one day whatever
 * time of day the suite runs (started at the real time, runs after ~19:00 UTC crossed midnight).
 */
export const todayUtcAt = (hours: number, minutes = 0): number => Math.floor(Date.now() / 86_400_000) * 86_400_000 + (hours * 60 + minutes) * 60_000;


interface MenuItem {
  description: string;
  foods: readonly { name: string; calories: number }[];
  macros: { protein_g: number; carbs_g: number; fat_g: number; fiber_g: number };
  sodium_mg: number;
  caffeine_mg: number;
}

const MENU: Record<'breakfast' | 'lunch' | 'dinner' | 'snack', readonly MenuItem[]> = {
  breakfast: [
    { description: 'Porridge with banana and honey', foods: [{ name: 'Oats', calories: 300 }, { name: 'Banana', calories: 105 }, { name: 'Honey', calories: 60 }], macros: { protein_g: 12, carbs_g: 82, fat_g: 7, fiber_g: 8 }, sodium_mg: 90, caffeine_mg: 0 },
    { description: 'Eggs on sourdough, flat white', foods: [{ name: 'Two eggs', calories: 155 }, { name: 'Sourdough', calories: 180 }, { name: 'Flat white', calories: 110 }], macros: { protein_g: 26, carbs_g: 40, fat_g: 18, fiber_g: 2 }, sodium_mg: 520, caffeine_mg: 130 },
    { description: 'Greek yoghurt, berries, granola', foods: [{ name: 'Greek yoghurt', calories: 190 }, { name: 'Berries', calories: 60 }, { name: 'Granola', calories: 140 }], macros: { protein_g: 20, carbs_g: 45, fat_g: 12, fiber_g: 5 }, sodium_mg: 80, caffeine_mg: 0 },
  ],
  lunch: [
    { description: 'Lentil soup and rye bread', foods: [{ name: 'Lentil soup', calories: 330 }, { name: 'Rye bread', calories: 160 }], macros: { protein_g: 24, carbs_g: 70, fat_g: 9, fiber_g: 16 }, sodium_mg: 900, caffeine_mg: 0 },
    { description: 'Chicken salad wrap', foods: [{ name: 'Wrap', calories: 210 }, { name: 'Chicken', calories: 190 }, { name: 'Salad', calories: 40 }], macros: { protein_g: 36, carbs_g: 38, fat_g: 16, fiber_g: 5 }, sodium_mg: 780, caffeine_mg: 0 },
    { description: 'Rice bowl with tofu and greens', foods: [{ name: 'Rice', calories: 260 }, { name: 'Tofu', calories: 180 }, { name: 'Greens', calories: 50 }], macros: { protein_g: 24, carbs_g: 66, fat_g: 14, fiber_g: 6 }, sodium_mg: 640, caffeine_mg: 0 },
  ],
  dinner: [
    { description: 'Salmon, potatoes and broccoli', foods: [{ name: 'Salmon', calories: 360 }, { name: 'Potatoes', calories: 220 }, { name: 'Broccoli', calories: 55 }], macros: { protein_g: 42, carbs_g: 48, fat_g: 26, fiber_g: 7 }, sodium_mg: 420, caffeine_mg: 0 },
    { description: 'Pasta with tomato and parmesan', foods: [{ name: 'Pasta', calories: 420 }, { name: 'Tomato sauce', calories: 90 }, { name: 'Parmesan', calories: 110 }], macros: { protein_g: 26, carbs_g: 96, fat_g: 16, fiber_g: 6 }, sodium_mg: 780, caffeine_mg: 0 },
    { description: 'Vegetable curry with rice', foods: [{ name: 'Curry', calories: 380 }, { name: 'Rice', calories: 260 }], macros: { protein_g: 18, carbs_g: 92, fat_g: 22, fiber_g: 10 }, sodium_mg: 980, caffeine_mg: 0 },
  ],
  snack: [
    { description: 'Apple and almonds', foods: [{ name: 'Apple', calories: 95 }, { name: 'Almonds', calories: 160 }], macros: { protein_g: 6, carbs_g: 28, fat_g: 14, fiber_g: 7 }, sodium_mg: 2, caffeine_mg: 0 },
    { description: 'Espresso and a biscuit', foods: [{ name: 'Espresso', calories: 5 }, { name: 'Biscuit', calories: 80 }], macros: { protein_g: 1, carbs_g: 11, fat_g: 4, fiber_g: 0 }, sodium_mg: 60, caffeine_mg: 65 },
  ],
};

export type SeedMeal = { timestamp: string; meal_type: keyof typeof MENU; description: string; foods: { name: string; calories: number }[]; macros: Record<string, number>; micros: Record<string, number> };

/**
 * A plausible history of `days` days of meals (3 a day, a snack on some) ending the day before
 * `endMs` (UTC days), plus nightly sleep. Deterministic.
 */
export function history(days: number, endMs: number, seed = 7): { meals: SeedMeal[]; sleep: { start: string; end: string; efficiency: number; awakenings: number }[] } {
  const rnd = prng(seed);
  const pick = (list: readonly MenuItem[]): MenuItem => list[Math.floor(rnd() * list.length)]!;
  const jitter = (min: number) => Math.round((rnd() * 2 - 1) * min);
  const dayMs = 86_400_000;
  const firstMidnight = Math.floor(endMs / dayMs) * dayMs - days * dayMs;
  const meals: SeedMeal[] = [];
  const sleep: { start: string; end: string; efficiency: number; awakenings: number }[] = [];
  for (let d = 0; d < days; d++) {
    const midnight = firstMidnight + d * dayMs;
    const plan: [keyof typeof MENU, number][] = [
      ['breakfast', 7 * 60 + 30 + jitter(35)],
      ['lunch', 12 * 60 + 45 + jitter(40)],
      ['dinner', 19 * 60 + 10 + jitter(55)],
    ];
    if (rnd() < 0.45) plan.splice(2, 0, ['snack', 16 * 60 + jitter(50)]);
    for (const [type, minute] of plan) {
      const m = pick(MENU[type]);
      const calories = m.foods.reduce((s, f) => s + f.calories, 0);
      meals.push({
        timestamp: iso(midnight + minute * 60_000),
        meal_type: type,
        description: m.description,
        foods: m.foods.map((f) => ({ ...f })),
        macros: { calories, ...m.macros },
        micros: { sodium_mg: m.sodium_mg, caffeine_mg: m.caffeine_mg },
      });
    }
    const bed = midnight + (23 * 60 + jitter(45)) * 60_000;
    const wake = midnight + dayMs + (7 * 60 + jitter(30)) * 60_000;
    if (wake < endMs) sleep.push({ start: iso(bed), end: iso(wake), efficiency: Math.round((0.82 + rnd() * 0.14) * 100) / 100, awakenings: Math.floor(rnd() * 4) });
  }
  return { meals, sleep };
}

/** Writes a history through the API, several requests at a time. */
export async function seed(server: Server, data: ReturnType<typeof history>, concurrency = 8): Promise<void> {
  const jobs: (() => Promise<void>)[] = [
    ...data.meals.map((m) => async () => {
      const r = await server.api('POST', '/v1/nutrition/meals', m);
      if (r.status !== 200 && r.status !== 201) throw new Error(`seeding a meal failed: ${r.status} ${JSON.stringify(r.body)}`);
    }),
    ...data.sleep.map((s) => async () => {
      const r = await server.api('POST', '/v1/sleep/sessions', { ...s, source: 'e2e' });
      if (r.status !== 200 && r.status !== 201) throw new Error(`seeding sleep failed: ${r.status} ${JSON.stringify(r.body)}`);
    }),
  ];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < jobs.length) await jobs[next++]!();
    }),
  );
}
