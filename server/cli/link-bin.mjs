// Makes `npx chyme` work inside this checkout: npx looks for the command in node_modules/.bin,
// where npm links the bins of dependencies but not of the project itself.
import { chmodSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const target = join(root, 'build', 'server', 'cli', 'main.js');
const binDir = join(root, 'node_modules', '.bin');
const link = join(binDir, 'chyme');
chmodSync(target, 0o755);
mkdirSync(binDir, { recursive: true });
rmSync(link, { force: true });
symlinkSync(relative(binDir, target), link);
