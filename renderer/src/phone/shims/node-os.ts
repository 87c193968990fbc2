/**
 * `node:os` in the phone's worker build: sync names a device by its host name when the person
 * gives none (server/sync/index.ts); the phone's sync card always gives one, so this is a fallback.
 */
export const hostname = (): string => 'Phone';
