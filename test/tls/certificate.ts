/** The tests' TLS certificate: self-signed RSA for broker1.kafka.test, made by openssl. */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface CertificatePem {
  key: string;
  cert: string;
}

declare module 'vitest' {
  interface ProvidedContext {
    /** Made once per run by test/global-setup.ts; null without openssl. */
    testCertificate: CertificatePem | null;
  }
}

/** A new self-signed certificate and its key (PEM), or null when openssl is missing. */
export function makeCertificate(): CertificatePem | null {
  const dir = mkdtempSync(join(tmpdir(), 'kcid-cert-'));
  try {
    const key = join(dir, 'key.pem');
    const crt = join(dir, 'cert.pem');
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', crt, '-subj', '/O=kcid tests/CN=broker1.kafka.test', '-days', '30'], { stdio: 'ignore' });
    return existsSync(crt) ? { key: readFileSync(key, 'utf8'), cert: readFileSync(crt, 'utf8') } : null;
  } catch {
    return null;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
