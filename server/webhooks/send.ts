import { request as httpRequest, type Agent, type ClientRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { performance } from 'node:perf_hooks';
import type { TLSSocket } from 'node:tls';
import { CertificateRefusedError, verifiedTlsConnection } from './tls-pin.js';

/** One HTTP attempt of a delivery: what came back, or why nothing usable did. */
export interface SendResult {
  /** 2xx: the receiver acknowledged the delivery. */
  ok: boolean;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  /** The attempt was cut short because the service is stopping (not the receiver's fault). */
  interrupted: boolean;
  /** HTTPS: the SHA-256 fingerprint of the certificate the receiver presented, trusted or not. */
  peerCertificateSha256: string | null;
}

export interface SendOptions {
  timeoutMs: number;
  signal?: AbortSignal;
  /** HTTPS: trust exactly the certificate with this SHA-256 fingerprint instead of the usual verification. */
  pinnedCertificateSha256?: string | null;
  /**
   * http: receivers: a keep-alive agent whose connections later attempts reuse (the dispatcher
   * keeps one per subscription). Without one, the attempt opens and closes a connection of its own.
   */
  keepAliveAgent?: Agent;
}

const NETWORK_ERRORS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset by the receiver',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  EPIPE: 'connection closed by the receiver',
};

function describe(err: unknown): string {
  if (err instanceof CertificateRefusedError) return err.message;
  const e = err as NodeJS.ErrnoException;
  if (e?.code && NETWORK_ERRORS[e.code]) return NETWORK_ERRORS[e.code]!;
  if (e?.code && /CERT|SSL|TLS/.test(e.code)) return `TLS error (${e.code})`;
  if (e?.message === 'socket hang up') return 'the receiver closed the connection without answering';
  return e?.message ? String(e.message) : String(err);
}

/**
 * POSTs `body` (UTF-8) to `url` once. Uses node:http(s) directly: no redirect is followed (a 3xx is a
 * failure), an https connection is never reused (each one's certificate is judged afresh), an http
 * one only through `keepAliveAgent`, and the whole attempt (connect, TLS handshake, send, response
 * headers) is bounded by `timeoutMs`. An HTTPS receiver is trusted by the usual verification or,
 * with a pin, by its certificate's fingerprint (tls-pin.ts). Only a 2xx status counts as
 * delivered. Never rejects.
 */
export function postOnce(url: string | URL, body: string | Buffer, headers: Record<string, string>, options: SendOptions): Promise<SendResult> {
  const started = performance.now();
  // The dispatcher passes a subscription's URL parsed once and the body it signed as bytes.
  const target = typeof url === 'string' ? new URL(url) : url;
  const payload = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;

  return new Promise<SendResult>((resolve) => {
    let settled = false;
    let req: ClientRequest | undefined;
    let tlsSocket: TLSSocket | undefined;
    let peerCertificateSha256: string | null = null;
    const finish = (r: Omit<SendResult, 'durationMs' | 'interrupted' | 'peerCertificateSha256'> & { interrupted?: boolean }) => {
      if (settled) return;
      settled = true;
      // The timer stays armed until the socket closes: a receiver that answers and then never
      // finishes its body is still cut off at the deadline.
      if (!req || req.destroyed) clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      resolve({ ...r, interrupted: r.interrupted ?? false, peerCertificateSha256, durationMs: Math.round(performance.now() - started) });
    };
    const destroy = () => {
      req?.destroy();
      tlsSocket?.destroy(); // a handshake still under way belongs to no request yet
    };
    const timer = setTimeout(() => {
      finish({ ok: false, statusCode: null, error: `timed out after ${options.timeoutMs / 1000} s without a response` });
      destroy();
    }, options.timeoutMs);
    timer.unref?.();
    const onAbort = () => {
      finish({ ok: false, statusCode: null, error: 'interrupted: the service stopped during this attempt', interrupted: true });
      destroy();
    };
    if (options.signal?.aborted) return onAbort();
    options.signal?.addEventListener('abort', onAbort, { once: true });

    try {
      const keepAlive = target.protocol === 'http:' && options.keepAliveAgent !== undefined;
      const common = {
        method: 'POST',
        headers: { ...headers, 'Content-Length': String(payload.length), ...(keepAlive ? {} : { Connection: 'close' }) },
      };
      req =
        target.protocol === 'https:'
          ? httpsRequest(target, {
              ...common,
              // No agent: the connection is made (and the certificate judged) by verifiedTlsConnection.
              createConnection: verifiedTlsConnection({
                pinSha256: options.pinnedCertificateSha256 ?? null,
                onPeerCertificate: (sha256) => (peerCertificateSha256 = sha256),
                onConnecting: (socket) => (tlsSocket = socket),
              }) as never,
            })
          : httpRequest(target, { ...common, agent: keepAlive ? options.keepAliveAgent! : false });
    } catch (err) {
      return finish({ ok: false, statusCode: null, error: describe(err) });
    }
    req.on('response', (res: IncomingMessage) => {
      const status = res.statusCode ?? 0;
      // The answer is the status; its body is read and dropped so the socket closes cleanly.
      res.resume();
      res.on('error', () => {});
      if (status >= 200 && status < 300) return finish({ ok: true, statusCode: status, error: null });
      if (status >= 300 && status < 400) {
        const location = res.headers.location;
        return finish({
          ok: false,
          statusCode: status,
          error: `redirect${location ? ` to ${location}` : ''} not followed: the webhook URL must answer with a 2xx itself`,
        });
      }
      finish({ ok: false, statusCode: status, error: `the receiver answered HTTP ${status}; only a 2xx acknowledges a delivery` });
    });
    req.on('close', () => clearTimeout(timer));
    req.on('error', (err) => finish({ ok: false, statusCode: null, error: describe(err) }));
    req.end(payload);
  });
}
