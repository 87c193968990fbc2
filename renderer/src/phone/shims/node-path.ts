/** `node:path` in the phone's worker build: the joins the service's modules make of file names they never open there. */
export const join = (...parts: string[]): string => parts.join('/').replace(/\/+/g, '/');
export const dirname = (path: string): string => path.replace(/\/[^/]*$/, '') || '/';
export default { join, dirname };
