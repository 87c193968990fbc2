#!/usr/bin/env node
/**
 * The `chyme` command's entry point. It only prepares the process, then loads the commands
 * (cli.ts, through load-cli.ts) with a dynamic import: every static import is compiled before any module body runs,
 * and V8 grows its young generation while compiling them, so heap flags set any later could no
 * longer keep a long-running server small (see server/memory.ts).
 */
import { useCompactHeap } from '../memory.js';

// serve runs for hours; relay too; sync init/join turn a whole history into documents, where the
// garbage of Automerge's patches would otherwise pile up to twice what is alive.
if (['serve', 'relay', 'sync'].includes(process.argv[2] ?? '')) useCompactHeap();
// The relay has an entry of its own that loads only what it needs (relay-cli.ts).
const { runCli } = process.argv[2] === 'relay' ? await import('./relay-cli.js') : await (await import('./load-cli.js')).loadCli();
await runCli(process.argv.slice(2));
