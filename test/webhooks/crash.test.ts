/**
 * Crash test with a real `chyme serve` child process: SIGKILL it while an attempt is in flight
 * and again while a delivery waits for its next retry, restart it on the same database each time,
 * and check the delivery completes exactly once, on schedule, and is never sent after success.
 *
 * Needs the built server (`npm run build:server`; `npm test` builds first).
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, test } from 'node:test';
import { verifySignature } from '../../server/webhooks/verify.js';
import { sleep, startReceiver, stripeVerifies, type Received } from './helpers.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const CLI = join(ROOT, 'build/server/cli/main.js');

/** The build must be at least as new as the webhook sources, or this would test old code. */
function buildProblem(): string | undefined {
  if (!existsSync(CLI)) return 'build/server/cli/main.js is missing: run `npm run build:server` first';
  const src = join(ROOT, 'server/webhooks');
  for (const f of readdirSync(src).filter((n) => n.endsWith('.ts'))) {
    const built = join(ROOT, 'build/server/webhooks', f.replace(/\.ts$/, '.js'));
    if (!existsSync(built) || statSync(built).mtimeMs < statSync(join(src, f)).mtimeMs) {
      return `build/server/webhooks/${f.replace(/\.ts$/, '.js')} is older than its source: run \`npm run build:server\``;
    }
  }
  return undefined;
}

interface Child {
  proc: ChildProcess;
  url: string;
  output: () => string;
}

async function serve(dbPath: string): Promise<Child> {
  const proc = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--db', dbPath, '--tz', 'UTC'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  proc.stderr!.setEncoding('utf8').on('data', (d: string) => (out += d));
  const url = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error(`chyme serve did not start:\n${out}`)), 20_000);
    const poll = setInterval(() => {
      const m = /Chyme listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        clearInterval(poll);
        resolveUrl(m[1]!);
      }
    }, 20);
    proc.once('exit', (code) => {
      clearTimeout(timer);
      clearInterval(poll);
      reject(new Error(`chyme serve exited with ${code}:\n${out}`));
    });
  });
  return { proc, url, output: () => out };
}

function kill9(child: Child): Promise<void> {
  return new Promise((done) => {
    if (child.proc.exitCode !== null || child.proc.signalCode !== null) return done();
    child.proc.once('exit', () => done());
    child.proc.kill('SIGKILL');
  });
}

/**
 * How soon after a restart an overdue attempt must go out: well under the 4 s a lost schedule would
 * add, with room for a machine whose cores are both busy (a restarted process's first turns of its
 * event loop were seen to take ~1.9 s there).
 */
const RESUME_ALLOWANCE_MS = 3000;

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

test('SIGKILL mid-attempt and mid-retry: the delivery resumes on schedule and completes exactly once', { timeout: 90_000 }, async (t) => {
  const problem = buildProblem();
  if (problem) assert.fail(problem);

  const dir = mkdtempSync(join(tmpdir(), 'chyme-crash-'));
  dirs.push(dir);
  const dbPath = join(dir, 'chyme.db');
  const keyRun = spawnSync(process.execPath, [CLI, 'keys', 'create', '--name', 't', '--scopes', 'all', '--db', dbPath], { encoding: 'utf8' });
  assert.equal(keyRun.status, 0, keyRun.stderr);
  const key = keyRun.stdout.trim().split('\n').at(-1)!;
  assert.match(key, /^chy_/);

  // The receiver: attempts 1-2 fail, 3 hangs (the child is killed under it), 4 fails, 5+ succeed.
  // It deduplicates by webhook_delivery_id as the spec tells receivers to.
  const processed = new Map<string, number>();
  const acknowledged: Received[] = [];
  const rx = await startReceiver((r) => {
    const n = r.index + 1;
    if (n === 3) return { hang: true };
    if (n <= 4) return { status: 500 };
    const id = r.json.webhook_delivery_id as string;
    processed.set(id, (processed.get(id) ?? 0) + 1);
    acknowledged.push(r);
    return { status: 200 };
  });
  t.after(() => rx.close());

  let child = await serve(dbPath);
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(child.url + path, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  try {
    const sub = await api('POST', '/v1/webhooks', { url: rx.url, events: ['meal.created'] });
    assert.equal(sub.status, 201);
    const meal = await api('POST', '/v1/nutrition/meals', { timestamp: new Date().toISOString(), meal_type: 'snack', description: 'Apple' });
    assert.equal(meal.status, 201);

    // Attempts 1 (t0), 2 (t0+1 s), 3 (t0+3 s): kill the process while attempt 3 is in flight.
    await rx.waitFor(3, 30_000);
    await kill9(child);

    // Restart: attempt 3 had no outcome, so it is retried at once (attempt 4, which fails).
    child = await serve(dbPath);
    await rx.waitFor(4, 30_000);
    // Mid-retry: the next attempt is due 4 s after attempt 4 (the 3rd counted failure). Kill now,
    // and stay down until that time has passed, so the restarted process finds it overdue: resuming
    // the stored schedule sends it at once, while a schedule lost in the crash (a fresh 4 s backoff
    // from the restart) would send it 4 s later. Those 4 s, not a speed, are what is told apart.
    await sleep(800);
    await kill9(child);
    const killedAt = Date.now();
    const dueAt = rx.received[3]!.at + 4000;
    await sleep(Math.max(0, dueAt - Date.now()) + 200);
    child = await serve(dbPath);
    const readyAt = Date.now();
    await rx.waitFor(5, 30_000);
    const gap = rx.received[4]!.at - rx.received[3]!.at;
    t.diagnostic(
      `attempt 5 came ${gap} ms after attempt 4 (due after 4000 ms), ${rx.received[4]!.at - killedAt} ms after the kill, ${rx.received[4]!.at - readyAt} ms after the restarted service was ready`,
    );
    assert.ok(gap >= 3990, `not early (gap ${gap} ms)`);
    const lateBy = rx.received[4]!.at - readyAt;
    assert.ok(lateBy < RESUME_ALLOWANCE_MS, `resumed the stored schedule: ${lateBy} ms after the restart was ready (a fresh backoff would be 4000)`);

    // Nothing after the success, even across another restart.
    await sleep(2500);
    await kill9(child);
    child = await serve(dbPath);
    await sleep(1500);

    assert.equal(rx.received.length, 5, 'no attempt after the success');
    assert.equal(acknowledged.length, 1, 'exactly one 2xx-acknowledged delivery');
    const ids = new Set(rx.received.map((r) => r.json.webhook_delivery_id));
    assert.equal(ids.size, 1, 'one delivery id across every attempt and restart');
    assert.deepEqual([...processed.values()], [1]);
    for (const r of rx.received) {
      assert.ok(stripeVerifies(r, sub.body.secret, r.at), `attempt ${r.index + 1} signed validly`);
      assert.ok(verifySignature(r.body, r.headers['x-service-signature'], sub.body.secret));
    }

    const log = await api('GET', `/v1/webhooks/${sub.body.id}/deliveries`);
    const d = log.body.data.find((x: any) => x.event_type === 'meal.created');
    assert.equal(d.status, 'succeeded');
    assert.deepEqual(d.attempts.map((a: any) => a.outcome), ['failed', 'failed', 'interrupted', 'failed', 'succeeded']);
    const started = d.attempts.map((a: any) => Date.parse(a.started_at));
    t.diagnostic(`recorded attempt offsets: ${started.map((s: number) => s - started[0]).join(', ')} ms`);
    // Attempt 5 was due 4 s after attempt 4 ended, a schedule kept across the kill and restart: by
    // the service's own records it started no earlier, and soon after the restart was ready.
    const late = started[4] - Date.parse(d.attempts[3].finished_at) - 4000;
    t.diagnostic(`attempt 5 started ${late} ms after its due time, in a process started after the kill`);
    assert.ok(late >= 0, `not early (${late} ms)`);
    assert.ok(started[4] - readyAt < RESUME_ALLOWANCE_MS, `started ${started[4] - readyAt} ms after the restart was ready`);
  } catch (err) {
    t.diagnostic(child.output());
    throw err;
  } finally {
    await kill9(child);
  }
});
