/**
 * Before the tests: `npm run build` (type-check the source, which vitest does not, and bundle it),
 * so that the tests that run bin/kcid as a process (and the worker threads of --jobs) run the
 * current source; and make the TLS tests' certificate once. After them: this run's tshark cache
 * and scratch folders are removed (test/skip-report.ts has failed the run if a file left one).
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
    // test/skip-report.ts has failed the run on any left (an error here would not fail it).
    const prefix = scratchPrefix();
    for (const n of readdirSync(tmpdir())) if (n.startsWith(prefix)) rmSync(join(tmpdir(), n), { recursive: true, force: true });
  };
}
