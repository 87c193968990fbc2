// Rolls the built CLI's own modules (build/server/**, as tsc wrote them) and the packages they
// use into build/server/cli/cli.cjs, which load-cli.ts compiles with the V8 code cache that
// code-cache.mjs then writes beside it (cli.cjs.cache); `chyme relay`'s entry into relay-cli.js
// (in place); the mqtt package into build/server/mqtt/package.js (in place). Loading ~150 small
// modules one by one cost ~45 ms of a ~300 ms cold start (resolving, opening and compiling each
// file). The rest of build/server stays as tsc wrote it: the desktop app, the library entry point
// and the import worker import those files directly.
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const cliDir = join(here, '..', '..', 'build', 'server', 'cli');
const cli = join(cliDir, 'cli.js');
// Outputs of earlier builds: the ES module chunks the CLI was once split into (their names carry
// a content hash), and the code cache, which belongs to the bundle it was made from.
for (const f of readdirSync(cliDir)) if (f.startsWith('bundle-') || f === 'cli.cjs.cache') rmSync(join(cliDir, f));

const options = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  // Follows tsc's maps, so a stack trace still points into server/**/*.ts.
  sourcemap: 'linked',
  logLevel: 'warning',
};

/**
 * The entry calls useCompactHeap on a memory module before it loads the bundle, and load-cli.ts
 * hands the bundle that same module (in main.cjs, below, both are its one copy of memory.js; the
 * relay's entry uses build/server/memory.js); a copy of memory.js folded in would be another
 * module whose collector was never set, and collectGarbage (the engine's and the relay's, after
 * they drop documents) would do nothing.
 * The outputs sit in build/server/cli/, so '../memory.js' is that file (load-cli.ts hands it to
 * the CommonJS bundle, which cannot require an ES module).
 */
const oneMemoryModule = {
  name: 'one-memory-module',
  setup(b) {
    const memory = join(cliDir, '..', 'memory.js');
    b.onResolve({ filter: /memory\.js$/ }, (args) => (join(args.resolveDir, args.path) === memory ? { path: '../memory.js', external: true } : undefined));
  },
};

// What the start path need not parse: iconv-lite's encoding tables (550 KB), which it requires on
// the first body it decodes, load then from node_modules; zod's translations of its messages into
// 40 languages (370 KB; Chyme words its own and never sets a locale) are left out, only English,
// zod's default, stays.
const leanStart = {
  name: 'lean-start',
  setup(b) {
    // Only where the bundle's require finds the very copy being bundled (a nested second copy of
    // iconv-lite stays bundled whole).
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
      resolveDir: cliDir,
    }));
  },
};

/** The mqtt package, bundled on its own (below): loaded once a broker is set, never at start. */
const mqttPackage = join(cliDir, '..', 'mqtt', 'package.js');
const mqttApart = {
  name: 'mqtt-apart',
  setup(b) {
    b.onResolve({ filter: /package\.js$/ }, (args) => (join(args.resolveDir, args.path) === mqttPackage ? { path: '../mqtt/package.js', external: true } : undefined));
  },
};

const bundlePath = join(cliDir, 'cli.cjs');
await build({
  ...options,
  entryPoints: [cli],
  outfile: bundlePath,
  // CommonJS, because V8 can cache the compiled code of a script (load-cli.ts) and Node 20 offers
  // no such cache for an ES module. One file: esbuild splits only ES modules. What is imported
  // only on demand (the sync engine with ws and the relay client, the MCP command) is in it too,
  // behind esbuild's lazy module wrappers: its top level runs on first import(), and with the code
  // cache its size costs reading the file, not compiling it. So modules the start path and the
  // sync engine share exist once (the engine once had its own copy of digestion/cache.js, whose
  // derived-data cache the service never attached).
  format: 'cjs',
  // Packages are bundled too: loading express, zod and the rest file by file was most of `chyme
  // serve`'s cold start (~400 small CommonJS and ES modules, each resolved, read and compiled;
  // docs/performance.md, "Cold start"). Left in node_modules: better-sqlite3, a native addon;
  // Automerge, which finds its WebAssembly beside its own files; the MCP SDK, loaded only for MCP
  // (server/mcp/sdk.ts), with its own copy of zod; busboy, on the first upload. The mqtt package
  // (~850 KB) is its own bundle (mqtt-apart).
  external: ['better-sqlite3', '@automerge/*', '@modelcontextprotocol/sdk', '@modelcontextprotocol/sdk/*', 'busboy'],
  // Every module's import.meta is the bundle's, as it was when the bundle was an ES module.
  define: { 'import.meta': '__chymeImportMeta' },
  // __chymeLazyRequire: see lazyBuiltins below.
  banner: {
    js: "var __chymeImportMeta = { url: require('node:url').pathToFileURL(__filename).href };\nvar __chymeLazyRequire = (id) => { let m; return new Proxy({}, { get: (_, key) => (m ??= require(id))[key] }); };",
  },
  plugins: [leanStart, oneMemoryModule, mqttApart],
});

// esbuild writes every string and identifier in ASCII (its default charset) but keeps comments as
// they are; one em dash made V8 hold the whole 2 MB source as a two-byte string, decoded from
// UTF-8 at every start (~13 ms). Outside strings, a comment's character is nobody's business.
//
// And import() of what the bundle leaves out (the MCP SDK, busboy, the mqtt package) calls
// load-cli.ts's importer instead: in Node 20 a function V8 restored from a code cache has lost the
// script's import() callback ("A dynamic import callback was not specified"), and the callback
// vm offers prints an experimental-feature warning. load-cli.js sits beside the bundle, so its
// import() resolves every specifier as the bundle's own would.
//
// And Node's own modules that the first answers never use are required on first use, not at
// start (together ~10 ms of a cold start's CPU): https and tls (a webhook to an https URL, the
// relay's TLS), worker_threads (an import), zlib (the food table, read once after start). esbuild
// turns `import { request } from 'node:https'` into `var import_node_https = require("node:https")`
// and every use into a property read of it, so a stand-in that requires the module at its first
// property read changes nothing else.
const lazyBuiltins = /^(\s*(?:var )?import_node_(?:https|tls|worker_threads|zlib)\d* = )require\(("node:(?:https|tls|worker_threads|zlib)")\);$/gm;
writeFileSync(
  bundlePath,
  readFileSync(bundlePath, 'utf8')
    .replace(/[^\0-\x7f]/g, '?')
    .replace(/\bimport\(("[^"]+")\)/g, '__chymeImport($1)')
    .replace(lazyBuiltins, '$1__chymeLazyRequire($2);'),
);

await build({
  ...options,
  // `chyme relay` has an entry of its own (relay-cli.ts), so that it loads none of the service.
  entryPoints: [join(cliDir, 'relay-cli.js')],
  outfile: join(cliDir, 'relay-cli.js'),
  allowOverwrite: true,
  format: 'esm',
  external: ['better-sqlite3', '@automerge/*', './load-cli.js'],
  // Bundled CommonJS packages call require() for Node's own modules, which an ES module lacks.
  banner: { js: "import { createRequire as __chymeCreateRequire } from 'node:module'; const require = __chymeCreateRequire(import.meta.url);" },
  plugins: [oneMemoryModule],
});

await build({
  ...options,
  entryPoints: [mqttPackage],
  outfile: mqttPackage,
  allowOverwrite: true,
  format: 'esm',
  banner: { js: "import { createRequire as __chymeCreateRequire } from 'node:module'; const require = __chymeCreateRequire(import.meta.url);" },
});

// The code cache of the bundle, made by a start of `chyme serve` (code-cache.mjs).
execFileSync(process.execPath, [join(here, 'code-cache.mjs')], { stdio: 'inherit' });

// The entry, main.js (tsc's), as one CommonJS file with memory.js and load-cli.js in it
// (main.cjs), and main.js itself rewritten to only require it: loaded as ES modules they cost a
// cold start ~30 ms of CPU (Node's ES module loader, a facade for each Node module they import,
// package.json lookups), and main.js must stay the path every caller starts (an ES module, as
// package.json's "type" makes every .js file here). The relay's memory.js is the shared ES module
// (main.ts imports it with import() for `chyme relay`): that import() stays one.
const entry = join(cliDir, 'main.js');
const relayMemoryApart = {
  name: 'relay-memory-apart',
  setup(b) {
    const memory = join(cliDir, '..', 'memory.js');
    b.onResolve({ filter: /memory\.js$/ }, (args) =>
      args.kind === 'dynamic-import' && join(args.resolveDir, args.path) === memory ? { path: '../memory.js', external: true } : undefined,
    );
  },
};
await build({
  ...options,
  sourcemap: false,
  entryPoints: [entry],
  outfile: join(cliDir, 'main.cjs'),
  format: 'cjs',
  // The commands: the CLI bundle (load-cli.ts compiles it with its code cache), else cli.js; the relay's own entry.
  external: ['./cli.js', './relay-cli.js'],
  define: { 'import.meta': '__chymeImportMeta' },
  banner: { js: "var __chymeImportMeta = { url: require('node:url').pathToFileURL(__filename).href };" },
  plugins: [relayMemoryApart],
});
writeFileSync(
  entry,
  "#!/usr/bin/env node\n// The `chyme` command: server/cli/main.ts, bundled as main.cjs by server/cli/bundle.mjs.\nimport { createRequire } from 'node:module';\ncreateRequire(import.meta.url)('./main.cjs');\n",
);
rmSync(`${entry}.map`, { force: true });
