/**
 * `server/paths.ts` in the phone's worker build: the package's files are not on a disk there.
 * The worker fetches or bundles what it needs; the version is the package's, put in at build time.
 */
declare const __CHYME_VERSION__: string;

export const packageRoot = (): string => '/chyme';
export const packageVersion = (): string => __CHYME_VERSION__;
export function rendererDir(): never {
  throw new Error('no renderer folder on the phone');
}
export function defaultDataDir(): never {
  throw new Error('no data folder on the phone');
}
export function defaultDbPath(): never {
  throw new Error('no data folder on the phone');
}
