/**
 * `node:fs` in the phone's worker build: there is no file system. What the service's modules
 * read from files (zone files, /etc/localtime) they also do without, on an error; what the
 * phone needs (the food table, the search words) its worker hands over instead (core-worker.ts).
 */
function absent(path: unknown): never {
  const err = new Error(`ENOENT: no file system in the phone's worker: '${String(path)}'`) as Error & { code: string };
  err.code = 'ENOENT';
  throw err;
}

export const readFileSync = absent;
export const readlinkSync = absent;
export const statSync = absent;
export const existsSync = (): boolean => false;
export default { readFileSync, readlinkSync, statSync, existsSync };
