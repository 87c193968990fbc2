/**
 * Where `chyme relay` listens unless told otherwise. Apart from relay.ts so that the CLI's usage
 * text names them without loading the relay (ws, https, the phone app's compression) at every
 * start of `chyme serve`.
 */
export const DEFAULT_RELAY_HOST = '127.0.0.1';
export const DEFAULT_RELAY_PORT = 7651;
