import { existsSync, readFileSync } from 'node:fs';
import { homedir, platform } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package root: the nearest folder above this file with Chyme's package.json. */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'package.json');
    if (existsSync(candidate)) {
      const pkg = JSON.parse(readFileSync(candidate, 'utf8')) as { name?: string };
      if (pkg.name === 'chyme') return dir;
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error('cannot find the chyme package root');
    dir = parent;
  }
}

export function packageVersion(): string {
  return (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
}

/** The built renderer, when it has been built. */
export function rendererDir(): string {
  return join(packageRoot(), 'build', 'renderer');
}

/** The OS's per-user data folder for Chyme (XDG on Linux). */
export function defaultDataDir(): string {
  const home = homedir();
  switch (platform()) {
    case 'darwin':
      return join(home, 'Library', 'Application Support', 'Chyme');
    case 'win32':
      return join(process.env.APPDATA ?? join(home, 'AppData', 'Roaming'), 'Chyme');
    default:
      return join(process.env.XDG_DATA_HOME || join(home, '.local', 'share'), 'chyme');
  }
}

export function defaultDbPath(): string {
  return join(defaultDataDir(), 'chyme.db');
}
