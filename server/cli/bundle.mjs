// Rolls the built CLI's own modules (build/server/**, as tsc wrote them) into one file, in place
// of build/server/cli/cli.js, which main.js imports. Loading ~150 small modules one by one cost
// ~45 ms of a ~300 ms cold start (resolving, opening and compiling each file); packages stay
// external and load from node_modules as before. The rest of build/server stays as tsc wrote it:
// the desktop app, the library entry point and the import worker import those files directly.
import { build } from 'esbuild';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const cli = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'build', 'server', 'cli', 'cli.js');
await build({
  entryPoints: [cli],
  outfile: cli,
  allowOverwrite: true,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  plugins: [
    {
      // The sync engine (and Automerge's wasm with it) is imported only once sync is on
      // (server/sync/index.ts): it stays a file of its own, loaded at run time, instead of being
      // folded in here and loaded by every command.
      name: 'sync-engine-on-demand',
      setup(b) {
        b.onResolve({ filter: /^\.\/engine\.js$/ }, (args) =>
          args.importer.endsWith(join('sync', 'index.js')) ? { path: '../sync/engine.js', external: true } : undefined,
        );
        // The relay's file storage likewise (it imports automerge-repo's storage package).
        b.onResolve({ filter: /^\.\/file-storage\.js$/ }, (args) =>
          args.importer.endsWith(join('sync', 'relay.js')) ? { path: '../sync/file-storage.js', external: true } : undefined,
        );
      },
    },
  ],
  // Follows tsc's maps, so a stack trace still points into server/**/*.ts.
  sourcemap: 'linked',
  logLevel: 'warning',
});
