/**
 * Loads the CLI's commands (cli.ts) for main.ts and relay-cli.ts. After a build that is
 * build/server/cli/cli.cjs, every module of the CLI and the packages it uses in one CommonJS file
 * (server/cli/bundle.mjs), compiled through `vm.Script` with the V8 code cache the build wrote
 * beside it (cli.cjs.cache, server/cli/code-cache.mjs): Node 20 keeps no compile cache for ES
 * modules, and compiling the bundle was the largest single cost of a cold start. Without the
 * bundle (a checkout before its build, the sources through tsx) the commands load as modules.
 *
 * The cache is only a shortcut: V8 ignores one made by another V8 or under other flags (only
 * `serve`, `relay` and `sync` set the compact heap's flags the build's cache was made with), and
 * one that does not match this very bundle, byte for byte, is never handed to V8 at all (V8
 * checks only the source's length), so a stale or damaged file costs the compile it would have
 * saved and nothing else.
 */
import { isAscii } from 'node:buffer';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';
import * as memory from '../memory.js';

export type Cli = typeof import('./cli.js');

const DIR = dirname(fileURLToPath(import.meta.url));
export const BUNDLE = join(DIR, 'cli.cjs');
export const CODE_CACHE = `${BUNDLE}.cache`;
/** The cache file: SHA-256 of (bundle, V8 data), then V8's data. */
const DIGEST_BYTES = 32;

/** The script the bundle was compiled as, for the build's cache writer (codeCache). */
let script: vm.Script | undefined;

export function codeCacheFile(source: Buffer, data: Buffer): Buffer {
  return Buffer.concat([createHash('sha256').update(source).update(data).digest(), data]);
}

/** V8's data from `file` when it was made for exactly `source`; otherwise undefined. */
function matchingCache(source: Buffer): Buffer | undefined {
  let file: Buffer;
  try {
    file = readFileSync(CODE_CACHE);
  } catch {
    return undefined;
  }
  if (file.length <= DIGEST_BYTES) return undefined;
  const data = file.subarray(DIGEST_BYTES);
  return createHash('sha256').update(source).update(data).digest().equals(file.subarray(0, DIGEST_BYTES)) ? data : undefined;
}

export async function loadCli(): Promise<Cli> {
  let source: Buffer;
  try {
    source = readFileSync(BUNDLE);
  } catch {
    return import('./cli.js');
  }
  const cachedData = matchingCache(source);
  // The wrapper Node's own CommonJS loader puts around a module. The bundle is ASCII (bundle.mjs
  // keeps it so): read as Latin-1 it needs no UTF-8 decoding.
  script = new vm.Script(`(function (exports, require, module, __filename, __dirname, __chymeImport) {${isAscii(source) ? source.toString('latin1') : source.toString('utf8')}\n})`, {
    filename: BUNDLE,
    ...(cachedData ? { cachedData } : {}),
  });
  const requireFromBundle = createRequire(BUNDLE);
  // memory.js stays one module (its collector is set up by main.js before this loads), and it is
  // an ES module, which require() cannot load in Node 20.
  const require = Object.assign((id: string) => (id === '../memory.js' ? memory : requireFromBundle(id)), requireFromBundle);
  const module = { exports: {} as Cli };
  // The bundle's import() calls (bundle.mjs): resolved from this folder, as from the bundle.
  const importFromBundle = (specifier: string): Promise<unknown> => import(specifier);
  (script.runInThisContext() as (...args: unknown[]) => void)(module.exports, require, module, BUNDLE, DIR, importFromBundle);
  return module.exports;
}

/** V8's code cache of the loaded bundle, as it stands (every function compiled so far), in the file's format. */
export function codeCache(): Buffer {
  if (!script) throw new Error('the CLI bundle is not loaded');
  return codeCacheFile(readFileSync(BUNDLE), script.createCachedData());
}
