/**
 * Writes that cannot destroy (issue 26.4-26.6, 27.10): `-o` writes a regular file, or streams to
 * an existing FIFO or character device, and never replaces one or follows a link; Parquet's
 * temporary files are hidden, next to their target, and created exclusively without following
 * links; an export's capture appears whole or not at all, whatever stops it (a failure, SIGINT,
 * SIGTERM), a rerun after an interruption works, and --overwrite removes only what kcid wrote.
 */
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, readlinkSync, statSync, symlinkSync, writeFileSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { removeTmpFiles, tmpDir } from './builder/capture.js';
import { runKcid as kcid } from './helpers.js';
import { createExclusive } from '../src/base/safe-write.js';
import { ParquetTableWriter, type Table } from '../src/export/parquet.js';

afterAll(() => removeTmpFiles());

const MIX = 'fixtures/kip1313-mix.pcapng';
const OTHER = 'fixtures/kcat-mock-produce.pcap';
const KCID = 'bin/kcid';
const TABLES = ['requests', 'connections', 'instances', 'findings', 'telemetry', 'telemetry_metrics'];

/** A FIFO (Node has no mkfifo: the tool makes it). */
function fifo(path: string): string {
  expect(spawnSync('mkfifo', [path]).status).toBe(0);
  return path;
}

/** A character device of our own (the null device's numbers) where root may make one; null elsewhere. */
function charDevice(path: string): string | null {
  return spawnSync('mknod', [path, 'c', '1', '3']).status === 0 ? path : null;
}

/** kcid as a process; resolves with its exit status or signal, and what it wrote to stderr. */
function start(args: string[]): { done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>; pid: number; kill: (s: NodeJS.Signals) => void } {
  const child = spawn(KCID, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdout.resume();
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stderr })));
  return { done, pid: child.pid!, kill: (s) => child.kill(s) };
}

/** What a FIFO's reader gets: `cat` under a time limit, so that a FIFO nobody opens ends the test instead of hanging it. */
function readFifo(path: string): Promise<Buffer> {
  return new Promise((resolve) => {
    const cat = spawn('timeout', ['20', 'cat', path], { stdio: ['ignore', 'pipe', 'ignore'] });
    const chunks: Buffer[] = [];
    cat.stdout.on('data', (d: Buffer) => chunks.push(d));
    cat.on('close', () => resolve(Buffer.concat(chunks)));
  });
}

const isParquet = (b: Buffer) => b.length > 8 && b.subarray(0, 4).toString() === 'PAR1' && b.subarray(-4).toString() === 'PAR1';

describe('-o never replaces a FIFO, a device or a link', () => {
  it.each([
    ['requests --format parquet', ['requests', MIX, '--format', 'parquet'], isParquet],
    ['analyze (table)', ['analyze', MIX, '--fail-on', 'none'], (b: Buffer) => b.toString().includes('Kafka connections')],
  ])('%s -o FIFO streams into the FIFO, which stays a FIFO', async (_name, args, check) => {
    const path = fifo(join(tmpDir(), 'pipe'));
    const reader = readFifo(path);
    const run = start([...args, '-o', path]);
    const [bytes, r] = await Promise.all([reader, run.done]);
    expect(r).toEqual({ code: 0, signal: null, stderr: '' });
    expect(lstatSync(path).isFIFO()).toBe(true);
    expect(check(bytes)).toBe(true);
    expect(readdirSync(join(path, '..'))).toEqual(['pipe']);
  });

  it.each([
    ['requests --format parquet', ['requests', MIX, '--format', 'parquet']],
    ['analyze (table)', ['analyze', MIX, '--fail-on', 'none']],
  ])('%s -o DEVICE writes to the device, which stays a device', async (_name, args) => {
    const dir = tmpDir();
    const dev = charDevice(join(dir, 'null'));
    if (dev === null) return expect(process.getuid?.()).not.toBe(0); // only root makes device nodes
    const before = statSync(dev).rdev;
    expect((await kcid([...args, '-o', dev])).code).toBe(0);
    expect(lstatSync(dev).isCharacterDevice()).toBe(true);
    expect(statSync(dev).rdev).toBe(before);
    expect(readdirSync(dir)).toEqual(['null']);
  });

  it.each([
    ['requests --format parquet', ['requests', MIX, '--format', 'parquet'], 'cannot write'],
    ['analyze (table)', ['analyze', MIX, '--fail-on', 'none'], 'cannot write --output'],
  ])('%s -o LINK is refused in one line: the link and its target stay as they were', async (_name, args, prefix) => {
    const dir = tmpDir();
    const victim = join(dir, 'victim');
    writeFileSync(victim, 'precious\n');
    const link = join(dir, 'report');
    symlinkSync(victim, link);
    const r = await kcid([...args, '-o', link]);
    expect(r).toEqual({ code: 2, stdout: '', stderr: `kcid: ${prefix} ${link}: is a symbolic link (kcid does not write through links: give the file it points to)\n` });
    expect(readFileSync(victim, 'utf8')).toBe('precious\n');
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readlinkSync(link)).toBe(victim);
    expect(readdirSync(dir).sort()).toEqual(['report', 'victim']);
  });

  it('a regular file is replaced whole (Parquet) or rewritten from its start (text)', async () => {
    const dir = tmpDir();
    const out = join(dir, 'out');
    writeFileSync(out, 'x'.repeat(100_000));
    expect((await kcid(['analyze', MIX, '--fail-on', 'none', '--format', 'json', '-o', out])).code).toBe(0);
    expect(() => JSON.parse(readFileSync(out, 'utf8'))).not.toThrow();
    expect((await kcid(['requests', MIX, '--format', 'parquet', '-o', out])).code).toBe(0);
    expect(isParquet(readFileSync(out))).toBe(true);
    expect(readdirSync(dir)).toEqual(['out']);
  });
});

const T: Table<number> = { name: 't', columns: [{ name: 'n', type: 'int64', nullable: false, get: (n) => n }] };

describe("Parquet's temporary file", () => {
  it('is hidden, next to its target, and gone once the file has its name', () => {
    const dir = tmpDir();
    const w = new ParquetTableWriter(T, join(dir, 'out.parquet'));
    w.add(1);
    const during = readdirSync(dir);
    expect(during.length).toBe(1);
    expect(during[0]).toMatch(new RegExp(`^\\.out\\.parquet\\.${process.pid}\\.[0-9a-f]{12}\\.tmp$`));
    w.close();
    expect(readdirSync(dir)).toEqual(['out.parquet']);
  });

  it("a link planted at the older versions' temporary name (PATH.PID.tmp) is not written through", async () => {
    const dir = tmpDir();
    const victim = join(dir, 'victim');
    writeFileSync(victim, 'precious\n');
    const out = join(dir, 'out.parquet');
    // kcid runs in this process here: its PID is ours.
    symlinkSync(victim, `${out}.${process.pid}.tmp`);
    expect((await kcid(['requests', MIX, '--format', 'parquet', '-o', out])).code).toBe(0);
    expect(readFileSync(victim, 'utf8')).toBe('precious\n');
    expect(isParquet(readFileSync(out))).toBe(true);
    expect(lstatSync(`${out}.${process.pid}.tmp`).isSymbolicLink()).toBe(true);
  });

  it('is created exclusively: a file or a link at the name makes the open fail, and is left alone', () => {
    const dir = tmpDir();
    const victim = join(dir, 'victim');
    writeFileSync(victim, 'precious\n');
    symlinkSync(victim, join(dir, 'link'));
    expect(() => createExclusive(join(dir, 'link'))).toThrow(expect.objectContaining({ code: 'EEXIST' }));
    expect(() => createExclusive(victim)).toThrow(expect.objectContaining({ code: 'EEXIST' }));
    expect(readFileSync(victim, 'utf8')).toBe('precious\n');
    closeSync(createExclusive(join(dir, 'new')));
    expect(readdirSync(dir).sort()).toEqual(['link', 'new', 'victim']);
  });
});

/** Every entry under the lake, as paths relative to it. */
function tree(dir: string): string[] {
  return (readdirSync(dir, { recursive: true, encoding: 'utf8' }) as string[]).sort();
}

const whole = (capture: string, tables = TABLES) => tables.flatMap((t) => [t, `${t}/capture=${capture}`, `${t}/capture=${capture}/part-0.parquet`]).sort();

describe('an export appears whole or not at all', () => {
  it.each(['SIGINT', 'SIGTERM'] as const)('%s while a capture is read: nothing of it is left, and a rerun works', async (signal) => {
    const dir = tmpDir();
    const lake = join(dir, 'lake');
    const input = fifo(join(dir, 'live.pcapng'));
    const run = start(['export', input, '--to', lake, '--name', 'live']);
    // The capture's first 3,000 bytes, then nothing more until the signal: kcid is mid-capture.
    const w = openSync(input, 'w');
    writeSync(w, readFileSync(MIX).subarray(0, 3000));
    const staging = () => (existsSync(lake) ? readdirSync(lake).filter((n) => n.startsWith('.kcid-staging.')) : []);
    for (let i = 0; i < 200 && staging().length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(staging().length).toBe(1);
    expect(readdirSync(join(lake, staging()[0]!))).toEqual(['requests']);
    run.kill(signal);
    const r = await run.done;
    closeSync(w);
    expect(r).toEqual({ code: null, signal, stderr: '' });
    expect(tree(lake)).toEqual([]);
    const again = await kcid(['export', MIX, '--to', lake, '--name', 'live']);
    expect(again.code).toBe(0);
    expect(tree(lake)).toEqual(whole('live'));
  });

  it('SIGINT while a capture file is read: the staging folder goes at once, the signal ends kcid', async () => {
    const dir = tmpDir();
    const lake = join(dir, 'lake');
    // 100 MB of one capture's packets over and over: a read that lasts a second or more.
    const b = readFileSync(OTHER);
    const body = b.subarray(24);
    const big = join(dir, 'big.pcap');
    writeFileSync(big, Buffer.concat([b.subarray(0, 24), ...Array<Buffer>(Math.ceil(100e6 / body.length)).fill(body)]));
    const run = start(['export', big, '--to', lake]);
    const staging = () => (existsSync(lake) ? readdirSync(lake).filter((n) => n.startsWith('.kcid-staging.')) : []);
    for (let i = 0; i < 1000 && staging().length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(staging().length).toBe(1);
    run.kill('SIGINT');
    expect(await run.done).toEqual({ code: null, signal: 'SIGINT', stderr: '' });
    expect(tree(lake)).toEqual([]);
  });

  it('what an interrupted older version left in a capture folder (part-0.parquet.PID.tmp) does not block the export, and goes', async () => {
    const lake = join(tmpDir(), 'lake');
    mkdirSync(join(lake, 'requests', 'capture=kip1313-mix'), { recursive: true });
    writeFileSync(join(lake, 'requests', 'capture=kip1313-mix', 'part-0.parquet.4242.tmp'), 'PAR1 no footer');
    const r = await kcid(['export', MIX, '--to', lake]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(tree(lake)).toEqual(whole('kip1313-mix'));
  });

  it('--overwrite replaces and removes only what kcid wrote', async () => {
    const lake = join(tmpDir(), 'lake');
    expect((await kcid(['export', MIX, '--to', lake, '--name', 'x'])).code).toBe(0);
    const folder = join(lake, 'requests', 'capture=x');
    writeFileSync(join(folder, 'notes.txt'), 'mine\n');
    writeFileSync(join(folder, 'part-0.parquet.4242.tmp'), 'PAR1 no footer');
    const old = readFileSync(join(folder, 'part-0.parquet'));
    // The other capture has no telemetry: the earlier export's telemetry tables go, folders and all.
    expect((await kcid(['export', OTHER, '--to', lake, '--name', 'x', '--overwrite'])).code).toBe(0);
    expect(tree(lake)).toEqual([...whole('x', TABLES.slice(0, 4)), 'requests/capture=x/notes.txt', 'telemetry', 'telemetry_metrics'].sort());
    expect(readFileSync(join(folder, 'notes.txt'), 'utf8')).toBe('mine\n');
    expect(readFileSync(join(folder, 'part-0.parquet')).equals(old)).toBe(false);
  });

  it('a failure while the tables are moved into place undoes the moves: the earlier export stays whole, old bytes and all', async () => {
    const lake = join(tmpDir(), 'lake');
    expect((await kcid(['export', MIX, '--to', lake, '--name', 'x'])).code).toBe(0);
    const before = TABLES.map((t) => readFileSync(join(lake, t, 'capture=x', 'part-0.parquet')));
    // A folder where findings' file goes: requests, connections and instances are moved before that fails.
    const findings = join(lake, 'findings', 'capture=x', 'part-0.parquet');
    const saved = readFileSync(findings);
    spawnSync('rm', [findings]);
    mkdirSync(join(findings, 'blocker'), { recursive: true });
    const r = await kcid(['export', OTHER, '--to', lake, '--name', 'x', '--overwrite']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^kcid: cannot move the export into place: [^\n]+\n$/);
    for (const [k, t] of TABLES.entries()) if (t !== 'findings') expect(readFileSync(join(lake, t, 'capture=x', 'part-0.parquet')).equals(before[k]!)).toBe(true);
    expect(saved.equals(before[3]!)).toBe(true);
    expect(readdirSync(lake).filter((n) => n.startsWith('.'))).toEqual([]);
  });

  it('a new capture whose move fails leaves none of its folders', async () => {
    const lake = join(tmpDir(), 'lake');
    mkdirSync(lake);
    // `findings` is a file: the capture's findings folder cannot be made under it.
    writeFileSync(join(lake, 'findings'), '');
    const r = await kcid(['export', MIX, '--to', lake]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^kcid: cannot move the export into place: [^\n]+\n$/);
    // The tables' own folders stay (empty); no capture folder, no staging folder.
    expect(tree(lake)).toEqual(['connections', 'findings', 'instances', 'requests', 'telemetry', 'telemetry_metrics']);
  });

  it('staging folders of processes that are gone (on this host) are removed by the next export; others are left', async () => {
    const lake = join(tmpDir(), 'lake');
    const host = hostname().replace(/[^A-Za-z0-9-]/g, '_') || 'host';
    // A PID that is not running: a short-lived child's, once it has exited.
    const dead = spawnSync('true').pid!;
    const names = [`.kcid-staging.${host}.${dead}.0123456789ab`, `.kcid-staging.${host}.1.0123456789ab`, `.kcid-staging.other-host.${dead}.0123456789ab`];
    for (const n of names) mkdirSync(join(lake, n, 'requests'), { recursive: true });
    expect((await kcid(['export', MIX, '--to', lake])).code).toBe(0);
    expect(readdirSync(lake).filter((n) => n.startsWith('.')).sort()).toEqual(names.slice(1).sort());
  });
});

describe('two exports into one lake', () => {
  it('an export without --overwrite does not replace a capture another export put in place while it ran', async () => {
    const dir = tmpDir();
    const lake = join(dir, 'lake');
    const input = fifo(join(dir, 'live.pcapng'));
    const slow = start(['export', input, '--to', lake, '--name', 'x']);
    const staging = () => (existsSync(lake) ? readdirSync(lake).filter((n) => n.startsWith('.kcid-staging.')) : []);
    const w = openSync(input, 'w');
    for (let i = 0; i < 200 && staging().length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(staging().length).toBe(1);
    // The other export of capture=x finishes first.
    expect((await kcid(['export', MIX, '--to', lake, '--name', 'x'])).code).toBe(0);
    const first = TABLES.map((t) => readFileSync(join(lake, t, 'capture=x', 'part-0.parquet')));
    writeSync(w, readFileSync(OTHER));
    closeSync(w);
    const r = await slow.done;
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`kcid: ${join(lake, 'requests', 'capture=x')} exists: that capture was exported before (--overwrite replaces it)\n`);
    for (const [k, t] of TABLES.entries()) expect(readFileSync(join(lake, t, 'capture=x', 'part-0.parquet')).equals(first[k]!)).toBe(true);
    expect(readdirSync(lake).filter((n) => n.startsWith('.'))).toEqual([]);
  });
});

describe('-o never destroys an input', () => {
  it.each([
    ['analyze (table)', ['analyze', '--fail-on', 'none'], 'cannot write --output'],
    ['requests --format parquet', ['requests', '--format', 'parquet'], 'cannot write'],
  ])('%s -o onto the capture it reads is refused in one line, the capture kept', async (_name, args, prefix) => {
    const dir = tmpDir();
    const input = join(dir, 'in.pcapng');
    writeFileSync(input, readFileSync(MIX));
    const r = await kcid([args[0]!, input, ...args.slice(1), '-o', input]);
    expect(r).toEqual({ code: 2, stdout: '', stderr: `kcid: ${prefix} ${input}: is an input (kcid does not write over what it reads)\n` });
    expect(readFileSync(input).equals(readFileSync(MIX))).toBe(true);
    expect(readdirSync(dir)).toEqual(['in.pcapng']);
  });
});

describe('-o /dev/stdout', () => {
  it.each([
    ['analyze (table)', ['analyze', MIX, '--fail-on', 'none'], (b: Buffer) => b.toString().includes('Kafka connections')],
    ['requests --format parquet', ['requests', MIX, '--format', 'parquet'], isParquet],
  ])('%s -o /dev/stdout (a link to the process\'s descriptor) writes to standard output, a pipe', async (_name, args, check) => {
    // Through the shell: standard output a pipe, as in `kcid ... -o /dev/stdout | next` (Node's own pipes are sockets, which /dev/stdout cannot reopen).
    const r = spawnSync('sh', ['-c', '"$@" | cat', 'sh', KCID, ...args, '-o', '/dev/stdout'], { stdio: ['ignore', 'pipe', 'pipe'] });
    expect(r.stderr.toString()).toBe('');
    expect(r.status).toBe(0);
    expect(check(r.stdout)).toBe(true);
  });
});

describe('a long -o name', () => {
  it('a 250-byte file name (under NAME_MAX) is written: its temporary name is shortened to fit', async () => {
    const dir = tmpDir();
    const out = join(dir, `${'é'.repeat(120)}.parquet`);
    const r = await kcid(['requests', MIX, '--format', 'parquet', '-o', out]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(isParquet(readFileSync(out))).toBe(true);
    expect(readdirSync(dir).length).toBe(1);
  });
});
