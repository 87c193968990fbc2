import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { packageRoot } from './paths.js';

/**
 * Keeps a long-running service's heap close to what it holds alive.
 *
 * The service keeps ~25 MB alive (the derived-data cache, the food search index, prepared
 * statements), but under load V8 left to its defaults grows the young generation to 32 MB and
 * lets garbage pile up in the old one to ~100 MB before its first full collection, so a server
 * that holds 25 MB sat at 170–220 MB resident (docs/performance.md, "Memory").
 *
 * Both flags are read by V8 each time it decides to grow a space, so they take effect when set at
 * run time, unlike `--max-semi-space-size` (fixed when the isolate starts: setting it here does
 * nothing). A young generation kept at its first size (1 MB semi-spaces) costs more, shorter
 * scavenges; a 20 % growth step costs more frequent, mostly concurrent, full marks. `npm run bench`
 * measures both sides: resident memory and the CPU time per request.
 *
 * Flags are process-wide, so only the programs that run the service for hours call this (the
 * `chyme serve` command and the desktop app's main process), never the library entry point.
 */
export function useCompactHeap(): void {
  setFlagsFromString('--semi-space-growth-factor=1');
  setFlagsFromString('--heap-growing-percent=20');
  // Sync's Automerge is WebAssembly. Left to tier up, V8 compiles its hot functions a second time
  // with TurboFan, and the compiler's scratch memory stays resident afterwards (malloc keeps it):
  // measured 104 MB against 83 MB for the same process that loads and edits a document. Liftoff's
  // baseline code is all it runs then. Read when the module is compiled, which happens only once
  // sync is on (the engine is imported lazily), so setting it here is in time.
  setFlagsFromString('--liftoff-only');
  // A collection on request (collectGarbage): see there. The flag gives gc() to contexts made
  // from now on; the one collectGarbage needs is made on its first call, not on the start's path
  // (a new context took 50 ms there in a profile on the loaded 2-core machine).
  setFlagsFromString('--expose-gc');
  compact = true;
  // V8 gives its own pages back; what the C library holds free is another matter (see
  // server/native/malloc-trim.c). Tuned now, and trimmed after each requested collection and
  // every TRIM_INTERVAL_MS, which frees what the traffic in between left behind.
  malloc = loadMallocTuning();
  if (malloc) {
    malloc.tune();
    setInterval(() => malloc!.trim(), TRIM_INTERVAL_MS).unref();
  }
}

/** How often the C library's free memory is given back: a trim takes 0.04 ms with nothing to give back, 4 ms for 64 MB. */
const TRIM_INTERVAL_MS = 10_000;

let compact = false;
/** V8's gc(), once collectGarbage first asked; undefined where the runtime gives none. */
let collect: (() => void) | undefined;
let collectLookedUp = false;
let malloc: MallocTuning | undefined;

interface MallocTuning {
  /** Fixed mmap and trim thresholds, at most two arenas for threads to come. */
  tune(): boolean;
  /** Gives every arena's free pages back to the system. */
  trim(): boolean;
}

/** The addon server/native/build.mjs built (Linux with glibc only), if it is there and loads. */
function loadMallocTuning(): MallocTuning | undefined {
  const path = join(packageRoot(), 'build', 'native', 'malloc-trim.node');
  if (!existsSync(path)) return undefined;
  try {
    return createRequire(import.meta.url)(path) as MallocTuning;
  } catch {
    // Built for another system or runtime: without it, malloc keeps more.
  }
  return undefined;
}

/**
 * A full collection now, in a process that called useCompactHeap (elsewhere nothing). For the
 * moment right after a large structure was let go while the process goes idle: sync drops the
 * documents it loaded for a start-up pass or to send them (tens of MB), and an idle process
 * allocates too little for V8 to collect on its own, so they stayed resident for as long as it
 * stayed idle (measured: a 70 MB heap holding 29 MB alive, unchanged for minutes).
 */
export function collectGarbage(): void {
  if (!compact) return;
  if (!collectLookedUp) {
    collectLookedUp = true;
    try {
      collect = runInNewContext('gc') as () => void;
    } catch {
      // A runtime that ignores the flag once started (not Node 20): V8 collects on its own schedule.
    }
  }
  collect?.();
  malloc?.trim();
}
