import { isIP, type Socket } from 'node:net';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';

/**
 * Certificate pinning for webhook receivers with self-signed certificates (Home Assistant on a
 * home network). A subscription may trust exactly one certificate, named by its SHA-256
 * fingerprint; without a pin the receiver is verified as usual (trusted chain and host name).
 * There is no switch that turns verification off.
 */

/** Two hex digits per byte, colon-separated, upper case: how Node (fingerprint256) and openssl print it. */
export const FINGERPRINT_PATTERN = '^([0-9A-F]{2}:){31}[0-9A-F]{2}$';

/**
 * The canonical form of a SHA-256 fingerprint typed or pasted in any usual way ("AB:CD:…",
 * "ab cd …", 64 hex digits, or openssl's "sha256 Fingerprint=AB:…"); undefined when it is not one.
 */
export function normalizeFingerprint(raw: string): string | undefined {
  const hex = raw
    .trim()
    .replace(/^sha-?256\s*fingerprint\s*=\s*/i, '')
    .replace(/[\s:-]/g, '')
    .toUpperCase();
  if (!/^[0-9A-F]{64}$/.test(hex)) return undefined;
  return hex.match(/../g)!.join(':');
}

/** The receiver presented a certificate this subscription does not trust; nothing was sent. */
export class CertificateRefusedError extends Error {
  constructor(
    message: string,
    readonly peerSha256: string | null,
  ) {
    super(message);
    this.name = 'CertificateRefusedError';
  }
}

const HOW_TO_PIN = 'set tls_certificate_sha256 on the webhook (or use "Trust this certificate" in the app) to trust exactly this certificate';

/** Why Node refused a certificate, in words (its authorizationError codes). */
function untrustedReason(code: string): string {
  if (code === 'DEPTH_ZERO_SELF_SIGNED_CERT' || code === 'SELF_SIGNED_CERT_IN_CHAIN') return 'it is self-signed';
  if (code === 'CERT_HAS_EXPIRED') return 'it has expired';
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') return 'it is not issued for this host name';
  if (code === 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' || code === 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY') return 'its issuer is not a trusted authority';
  return `verification failed (${code})`;
}

export interface PinnedConnectionOptions {
  /** The pinned fingerprint (canonical form), or null for the usual verification. */
  pinSha256: string | null;
  /** Told the fingerprint of every certificate a receiver presents, trusted or not. */
  onPeerCertificate: (sha256: string) => void;
  /** Told the socket as soon as it exists, so an attempt that times out can close it mid-handshake. */
  onConnecting?: (socket: TLSSocket) => void;
  /** Who is on the other end, in refusals (default "receiver"; the MQTT client says "broker"). */
  peer?: string;
  /** How to trust the certificate, in refusals (default: the webhook's tls_certificate_sha256). */
  howToPin?: string;
  /** ALPN protocols to offer (default http/1.1, for webhook receivers); [] offers none. */
  alpn?: string[];
}

/**
 * A `createConnection` for https.request that finishes the TLS handshake, decides whether to
 * trust the peer, and only then hands the socket to the request, so no byte of a delivery reaches
 * a receiver that is not trusted. The decision:
 * - with a pin: the peer's certificate fingerprint equals the pin (chain and name are not
 *   consulted: the person trusted this exact certificate);
 * - without: Node's own verdict (socket.authorized: chain to a trusted authority and host name,
 *   the same checks as rejectUnauthorized), whose failure names the observed fingerprint.
 */
export function verifiedTlsConnection(options: PinnedConnectionOptions) {
  return (opts: { host?: string | null; port?: number | string | null }, done: (err: Error | null, socket?: Socket) => void): undefined => {
    const host = opts.host ?? 'localhost';
    const socket: TLSSocket = tlsConnect({
      host,
      port: Number(opts.port ?? 443),
      // A name for SNI and for Node's host-name check; an IP address is checked against the IP SANs.
      ...(isIP(host) ? {} : { servername: host }),
      // Node's verdict is read below instead of enforced here, so the fingerprint of a refused
      // certificate can be reported; the socket is destroyed before any request byte is written.
      rejectUnauthorized: false,
      ...((options.alpn ?? ['http/1.1']).length ? { ALPNProtocols: options.alpn ?? ['http/1.1'] } : {}),
    });
    const peerName = options.peer ?? 'receiver';
    options.onConnecting?.(socket);
    let handedOver = false;
    const settle = (err: Error | null) => {
      if (handedOver) return; // after the hand-over the request's own error handling applies
      handedOver = true;
      if (err) done(err);
      else done(null, socket);
    };
    socket.on('error', settle);
    socket.once('secureConnect', () => {
      const peer = socket.getPeerCertificate();
      const sha256 = peer && typeof peer.fingerprint256 === 'string' && peer.fingerprint256 ? peer.fingerprint256 : null;
      if (sha256) options.onPeerCertificate(sha256);
      let refusal: CertificateRefusedError | undefined;
      if (options.pinSha256 !== null) {
        if (sha256 !== options.pinSha256) {
          refusal = new CertificateRefusedError(
            `TLS: the ${peerName}'s certificate (SHA-256 ${sha256 ?? 'unknown'}) is not the pinned one (${options.pinSha256}); nothing was sent. If the ${peerName} got a new certificate, pin the new fingerprint.`,
            sha256,
          );
        }
      } else if (!socket.authorized) {
        const code = String(socket.authorizationError ?? 'UNKNOWN');
        refusal = new CertificateRefusedError(
          `TLS: the ${peerName}'s certificate is not trusted: ${untrustedReason(code)} (${code}); nothing was sent. Its SHA-256 fingerprint is ${sha256 ?? 'unknown'}: if that is your ${peerName}'s certificate, ${options.howToPin ?? HOW_TO_PIN}.`,
          sha256,
        );
      }
      if (refusal) {
        settle(refusal);
        socket.destroy();
        return;
      }
      settle(null);
    });
    return undefined;
  };
}
