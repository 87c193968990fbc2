// Builds server/native/malloc-trim.c into build/native/malloc-trim.node, on Linux with glibc only
// (the one C library it tunes), with the C compiler that building better-sqlite3 already needs.
// Anything missing (another system, no compiler, no Node-API header) is said and skipped: the
// service runs without it, keeping more memory (server/memory.ts).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, '..', '..', 'build', 'native', 'malloc-trim.node');
const skip = (why) => {
  rmSync(out, { force: true });
  console.log(`server/native: not built (${why}); the service runs without malloc tuning.`);
};

const glibc = process.platform === 'linux' && process.report?.getReport().header.glibcVersionRuntime;
if (!glibc) {
  skip('not Linux with glibc');
} else {
  // Node-API's header: beside this Node (official builds), where npm's nodedir says, or the distribution's.
  const candidates = [join(dirname(process.execPath), '..', 'include', 'node'), process.env.npm_config_nodedir && join(process.env.npm_config_nodedir, 'include', 'node'), '/usr/include/node', '/usr/local/include/node'].filter(Boolean);
  const include = candidates.find((d) => existsSync(join(d, 'node_api.h')));
  if (!include) {
    skip(`no node_api.h in ${candidates.join(', ')}`);
  } else {
    mkdirSync(dirname(out), { recursive: true });
    try {
      execFileSync(process.env.CC || 'cc', ['-shared', '-fPIC', '-O2', '-Wall', '-Wextra', '-Werror', `-I${include}`, '-o', out, join(here, 'malloc-trim.c')], { stdio: ['ignore', 'inherit', 'inherit'] });
    } catch (err) {
      skip(`the C compiler failed: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
    }
  }
}
