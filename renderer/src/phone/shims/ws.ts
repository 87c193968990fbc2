/**
 * `ws` in the phone's worker build: the browser's own WebSocket. server/sync/index.ts opens the
 * relay connection as `new WebSocket(url, { maxPayload })`; a browser's second argument is the
 * subprotocol list (an object there is a SyntaxError), and a browser has no payload cap to set.
 */
export class WebSocket extends globalThis.WebSocket {
  constructor(url: string | URL) {
    super(url);
  }
}
