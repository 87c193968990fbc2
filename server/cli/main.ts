#!/usr/bin/env node
/**
 * The `chyme` command's entry point. It only prepares the process, then loads the commands
 * (cli.ts, through load-cli.ts) with a dynamic import: every static import is compiled before any module body runs,
 * and V8 grows its young generation while compiling them, so heap flags set any later could no
 * longer keep a long-running server small (see server/memory.ts).
 *
 * After a build this runs as build/server/cli/main.cjs, one CommonJS file with memory.ts and
 * load-cli.ts in it, which main.js only requires (server/cli/bundle.mjs): loading them as ES
 * modules cost a cold start ~30 ms of CPU (the ES module loader, a facade for each Node module they
 * import, package.json lookups). No top-level await for that reason: CommonJS has none.
 */
import { useCompactHeap } from '../memory.js';

const command = process.argv[2] ?? '';
const argv = process.argv.slice(2);
if (command === 'relay') {
  // The relay has an entry of its own that loads only what it needs (relay-cli.ts), a bundle
  // apart that shares build/server/memory.js with load-cli.js: the compact heap (the relay runs
  // for hours) is set on that module, imported as such (bundle.mjs keeps this import() out of
  // main.cjs).
  void import('../memory.js')
    .then((memory) => {
      memory.useCompactHeap();
      return import('./relay-cli.js');
    })
    .then((relay) => relay.runCli(argv));
} else {
  // serve runs for hours; sync init/join turn a whole history into documents, where the garbage
  // of Automerge's patches would otherwise pile up to twice what is alive.
  if (command === 'serve' || command === 'sync') useCompactHeap();
  void import('./load-cli.js')
    .then((loader) => loader.loadCli())
    .then((cli) => cli.runCli(argv));
}
