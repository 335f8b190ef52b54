/**
 * Before the tests: `npm run build` (type-check the source, which vitest does not, and bundle it),
 * so that the tests that run bin/kcid as a process (and the worker threads of --jobs) run the
 * current source, and make the TLS tests' certificate once. After them: no scratch folder of this run may be left in the temporary directory
 * (test/setup-file.ts removes each file's; one left here is a test that made its own and kept it).
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scratchPrefix } from './builder/capture.js';
import { tsharkCacheDir } from './real/differential.js';
import { makeCertificate } from './tls/certificate.js';
import type { TestProject } from 'vitest/node';

export default function setup(project: TestProject): () => void {
  // Names this run's scratch folders (the workers inherit it): other runs on the machine have their own.
  process.env.KCID_TEST_RUN = `${process.pid}${randomBytes(3).toString('hex')}`;
  execFileSync('npm', ['run', '--silent', 'build'], { stdio: 'inherit' });
  // One TLS certificate for the run (an RSA key pair takes openssl a while on a loaded machine).
  project.provide('testCertificate', makeCertificate());
  return () => {
    const cache = tsharkCacheDir();
    if (cache !== null) rmSync(cache, { recursive: true, force: true });
    const prefix = scratchPrefix();
    const left = readdirSync(tmpdir()).filter((n) => n.startsWith(prefix));
    for (const n of left) rmSync(join(tmpdir(), n), { recursive: true, force: true });
    if (left.length > 0) throw new Error(`tests left ${left.length} scratch folder(s) in ${tmpdir()} (${left.join(', ')}): removed now, but a test file did not clean up after itself`);
  };
}
