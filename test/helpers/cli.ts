import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, copyFileSync, existsSync, linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/**
 * The built CLI (npm test builds first), run exactly as `npx chyme` runs it. CHYME_TEST_CLI runs
 * the tests against another build (a baseline's `build/server/cli/main.js`, to compare figures).
 */
export const CLI = process.env.CHYME_TEST_CLI || join(ROOT, 'build', 'server', 'cli', 'main.js');

export function runCli(args: string[], env: NodeJS.ProcessEnv = {}): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 30_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The same as runCli without blocking the test's event loop, so several commands can run at once. */
export function runCliAsync(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

export interface ServeProcess {
  child: ChildProcess;
  url: string;
  appUrl: string;
  stdout(): string;
  stderr(): string;
  /** Sends a signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Starts `chyme serve` as a child and waits for its two ready lines. */
export async function startServe(args: string[], env: NodeJS.ProcessEnv = {}): Promise<ServeProcess> {
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--quiet', ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr!.on('data', (c) => (err += c));
  const ready = new Promise<{ url: string; appUrl: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`chyme serve did not get ready: ${out}\n${err}`)), 20_000);
    child.stdout!.on('data', (c) => {
      out += c;
      const listening = /^Chyme listening on (http:\/\/\S+)$/m.exec(out);
      const app = /^App: (http:\/\/\S+)$/m.exec(out);
      if (listening && app) {
        clearTimeout(timer);
        resolve({ url: listening[1]!, appUrl: app[1]! });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`chyme serve exited with ${code}: ${out}\n${err}`));
    });
  });
  const { url, appUrl } = await ready;
  return {
    child,
    url,
    appUrl,
    stdout: () => out,
    stderr: () => err,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode !== null) return child.exitCode;
      child.kill(signal);
      const [code] = (await once(child, 'exit')) as [number | null];
      return code;
    },
  };
}

/**
 * A copy of the built CLI and of what it loads at run time (package.json, build/server,
 * build/native and the packages it depends on) in a new folder under the system's temp folder
 * that every user may enter, for running `chyme` as another user. The checkout itself may sit in
 * a folder only its owner can enter (a clone under /root or in `mktemp -d`), where that user
 * would find no main.js at all. Files are hard-linked where they are readable by all, and copied
 * (then made readable) where they are not or the temp folder is on another device; the caller
 * removes `dir`.
 */
export function cliReachableByAll(): { dir: string; cli: string } {
  const dir = mkdtempSync(join(tmpdir(), 'chyme-cli-'));
  chmodSync(dir, 0o755);
  const place = (from: string, to: string, skipNodeModules: boolean): void => {
    if (statSync(from).isDirectory()) {
      mkdirSync(to, { recursive: true, mode: 0o755 });
      // Nested node_modules are packages of their own: placed (or left out) by their lockfile entry.
      for (const entry of readdirSync(from)) if (!(skipNodeModules && entry === 'node_modules')) place(join(from, entry), join(to, entry), skipNodeModules);
      return;
    }
    if (statSync(from).mode & 0o004) {
      try {
        linkSync(from, to);
        return;
      } catch {
        // another device, or links not allowed here: copied below
      }
    }
    copyFileSync(from, to);
    chmodSync(to, 0o644);
  };
  place(join(ROOT, 'package.json'), join(dir, 'package.json'), false);
  place(join(ROOT, 'build', 'server'), join(dir, 'build', 'server'), false);
  if (existsSync(join(ROOT, 'build', 'native'))) place(join(ROOT, 'build', 'native'), join(dir, 'build', 'native'), false);
  // The installed packages the service may load: those the lockfile marks neither dev nor optional.
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean; devOptional?: boolean; optional?: boolean }> };
  for (const [path, pkg] of Object.entries(lock.packages)) {
    if (path === '' || pkg.dev || pkg.devOptional || pkg.optional || !existsSync(join(ROOT, path))) continue;
    place(join(ROOT, path), join(dir, path), true);
  }
  return { dir, cli: join(dir, 'build', 'server', 'cli', 'main.js') };
}
