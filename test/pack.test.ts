/**
 * The packed tarball is what the README's recipes install (`npm pack`, then `npm install -g
 * ./kcid-<version>.tgz`): it must install into an empty folder and run there, worker included,
 * with nothing from the checkout. `files` in package.json decides what it holds.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tmpDir } from './builder/capture.js';

const VERSION = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;

describe('npm pack', () => {
  it('gives a tarball that installs into an empty folder and runs, worker threads too', () => {
    const dir = tmpDir();
    // dist/ is built by the tests' global setup; --ignore-scripts skips building it again.
    execFileSync('npm', ['pack', '--pack-destination', dir, '--ignore-scripts', '--silent'], { encoding: 'utf8' });
    const tarball = join(dir, `kcid-${VERSION}.tgz`);
    const listing = execFileSync('tar', ['tzf', tarball], { encoding: 'utf8' }).split('\n').filter((l) => l !== '' && !l.endsWith('.map')).sort();
    expect(listing).toEqual(['package/LICENSE', 'package/README.md', 'package/bin/kcid', 'package/dist/analysis/worker.mjs', 'package/dist/cli/kcid.mjs', 'package/dist/export/encoder-worker.mjs', 'package/package.json']);
    // The Apache-2.0 text package.json's licence names, as in the repository.
    const license = execFileSync('tar', ['xzfO', tarball, 'package/LICENSE'], { encoding: 'utf8' });
    expect(license).toBe(readFileSync('LICENSE', 'utf8'));
    expect(license).toMatch(/^\s*Apache License\s+Version 2\.0, January 2004\s+http:\/\/www\.apache\.org\/licenses\/\s+TERMS AND CONDITIONS/);
    expect(license).toContain('END OF TERMS AND CONDITIONS');
    const prefix = join(dir, 'prefix');
    execFileSync('npm', ['install', '-g', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', '--loglevel', 'error', tarball], { cwd: dir, encoding: 'utf8', timeout: 240_000 });
    const bin = join(prefix, 'bin', 'kcid');
    const empty = tmpDir();
    const version = spawnSync(bin, ['--version'], { cwd: empty, encoding: 'utf8' });
    expect(version.stdout).toBe(`${VERSION}\n`);
    const mix = resolve('fixtures/kip1313-mix.pcapng');
    const produce = resolve('fixtures/kcat-mock-produce.pcap');
    const r = spawnSync(bin, ['analyze', mix, produce, '--jobs', '2', '--format', 'json'], { cwd: empty, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(1);
    // The mix's 15 errors, 5 warnings and 2 notes, and the kcat capture's 3 notes (librdkafka's mock answers ApiVersions v3 with bytes over).
    expect((JSON.parse(r.stdout) as { summary: { findings: Record<string, number> } }).summary.findings).toEqual({ error: 15, warning: 5, info: 5 });
  }, 300_000);
});
