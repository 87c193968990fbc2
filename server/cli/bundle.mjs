// Rolls the built CLI's own modules (build/server/**, as tsc wrote them) into one file, in place
// of build/server/cli/cli.js, which main.js imports (plus chunks beside it, bundle-*.js, for what
// is loaded on demand). Loading ~150 small modules one by one cost
// ~45 ms of a ~300 ms cold start (resolving, opening and compiling each file); packages stay
// external and load from node_modules as before. The rest of build/server stays as tsc wrote it:
// the desktop app, the library entry point and the import worker import those files directly.
import { build } from 'esbuild';
import { readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const cli = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'build', 'server', 'cli', 'cli.js');
// Chunks from an earlier build (their names carry a content hash) would otherwise pile up.
for (const f of readdirSync(dirname(cli))) if (f.startsWith('bundle-')) rmSync(join(dirname(cli), f));
await build({
  // `chyme relay` has an entry of its own (relay-cli.ts), so that it loads none of the service.
  entryPoints: [cli, join(dirname(cli), 'relay-cli.js')],
  outdir: dirname(cli),
  allowOverwrite: true,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // Packages are bundled too: loading express, zod and the rest file by file was most of `chyme
  // serve`'s cold start (~400 small CommonJS and ES modules, each resolved, read and compiled;
  // docs/performance.md, "Cold start"). Left in node_modules: better-sqlite3, a native addon;
  // Automerge, which finds its WebAssembly beside its own files; and the MCP SDK, loaded only for
  // MCP (server/mcp/sdk.ts), with its own copy of zod.
  external: ['better-sqlite3', '@automerge/*', '@modelcontextprotocol/sdk', '@modelcontextprotocol/sdk/*'],
  // Bundled CommonJS packages call require() for Node's own modules, which an ES module lacks.
  banner: { js: "import { createRequire as __chymeCreateRequire } from 'node:module'; const require = __chymeCreateRequire(import.meta.url);" },
  // The sync engine (and Automerge's wasm with it) is imported only once sync is on
  // (server/sync/index.ts): splitting puts it in a chunk of its own, loaded at run time, instead of
  // being folded in here and loaded by every command. It used to be left external as tsc wrote it,
  // build/server/sync/engine.js, but that file imports the rest of the service from build/server
  // (57 modules: the digestion engine, the food search, the database layer…), a second copy of
  // modules this bundle already holds (and their module-level state twice: the engine's copy of
  // digestion/cache.js never had the service's derived-data cache attached). Loading it in a bare
  // process took +5.3 MB of JS heap and +10.6 MB resident; in `chyme serve` with sync on and ten
  // years (bench/sync-rss-probe.ts) V8's old space held ~2 MB less afterwards (27.1 against
  // 29.2 MB used under the light load), for as long as the service runs. Now the modules both
  // need are in a shared chunk, loaded once.
  splitting: true,
  chunkNames: 'bundle-[name]-[hash]',
  plugins: [
    {
      // What the start path need not parse (2.7 MB of JavaScript was a third of a cold start's
      // CPU): iconv-lite's encoding tables (550 KB), which it requires on the first body it
      // decodes, load then from node_modules; zod's translations of its messages into 40
      // languages (370 KB; Chyme words its own and never sets a locale) are left out, only
      // English, zod's default, stays.
      name: 'lean-start',
      setup(b) {
        // Only where the bundle's require finds the very copy being bundled (a nested second
        // copy of iconv-lite stays bundled whole).
        const fromCli = createRequire(cli);
        b.onResolve({ filter: /^\.\.\/encodings$/ }, (args) => {
          if (!/[\\/]iconv-lite[\\/]lib$/.test(args.resolveDir)) return undefined;
          let found;
          try {
            found = fromCli.resolve('iconv-lite/encodings');
          } catch {
            return undefined;
          }
          return found === join(args.resolveDir, '..', 'encodings', 'index.js') ? { path: 'iconv-lite/encodings', external: true } : undefined;
        });
        b.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) => (/[\\/]zod[\\/]v4[\\/](core|classic)$/.test(args.resolveDir) ? { path: 'zod-english-only', namespace: 'lean-start' } : undefined));
        b.onLoad({ filter: /.*/, namespace: 'lean-start' }, () => ({
          contents: "export { default as en } from 'zod/v4/locales/en.js';",
          resolveDir: dirname(cli),
        }));
      },
    },
    {
      // main.js (not bundled) calls useCompactHeap on build/server/memory.js before it loads this
      // bundle; a copy of memory.js folded in here would be another module whose collector was
      // never set, and collectGarbage (the engine's and the relay's, after they drop documents)
      // would do nothing. All outputs sit in build/server/cli/, so '../memory.js' is that file.
      name: 'one-memory-module',
      setup(b) {
        const memory = join(dirname(cli), '..', 'memory.js');
        b.onResolve({ filter: /memory\.js$/ }, (args) => (join(args.resolveDir, args.path) === memory ? { path: '../memory.js', external: true } : undefined));
      },
    },
  ],
  // Follows tsc's maps, so a stack trace still points into server/**/*.ts.
  sourcemap: 'linked',
  logLevel: 'warning',
});
