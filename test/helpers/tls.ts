import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface SelfSignedCertificate {
  key: string;
  cert: string;
  /** SHA-256 fingerprint as openssl prints it ("AB:CD:…"), read from openssl, not from Node. */
  sha256: string;
}

/**
 * A fresh self-signed certificate (P-256, valid 2 days) for `commonName`, made with the openssl
 * CLI, as a home user would make one for Home Assistant.
 */
export function selfSignedCertificate(commonName = 'homeassistant.local', altNames = 'DNS:homeassistant.local,IP:127.0.0.1'): SelfSignedCertificate {
  const dir = mkdtempSync(join(tmpdir(), 'chyme-cert-'));
  try {
    const keyPath = join(dir, 'key.pem');
    const certPath = join(dir, 'cert.pem');
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', keyPath, '-out', certPath,
        '-days', '2', '-subj', `/CN=${commonName}`, '-addext', `subjectAltName=${altNames}`],
      { stdio: 'pipe' },
    );
    const printed = execFileSync('openssl', ['x509', '-in', certPath, '-noout', '-fingerprint', '-sha256'], { encoding: 'utf8' });
    const sha256 = /Fingerprint=([0-9A-F:]+)/i.exec(printed)?.[1]?.toUpperCase();
    if (!sha256) throw new Error(`could not read the fingerprint from openssl: ${printed}`);
    return { key: readFileSync(keyPath, 'utf8'), cert: readFileSync(certPath, 'utf8'), sha256 };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
