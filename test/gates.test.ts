/**
 * Gates that must not pass on nothing (issue 27, item 14): a window empty by construction whatever
 * the forms of its bounds, one capture given twice by any path, --follow ended by SIGTERM or SIGHUP,
 * and --jobs capped by cores and inputs.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, linkSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { planAnalyze } from '../src/cli/analyze-command.js';
import { planClients } from '../src/cli/clients-command.js';
import { planTelemetry } from '../src/cli/telemetry-command.js';
import type { PlanContext } from '../src/cli/plan.js';
import { removeTmpFiles, tmpDir } from './builder/capture.js';
import { runKcid } from './helpers.js';

const MIX = resolve('fixtures/kip1313-mix.pcapng');
const MIX_BYTES = readFileSync(MIX);

afterAll(removeTmpFiles);

describe('a time window empty by construction', () => {
  // The mix capture starts at 2025-12-01T00:00:00.000Z.
  const SINCE_7S = "--since 7s (2025-12-01T00:00:07.000Z, from the capture's start at 2025-12-01T00:00:00.000Z) is after --until 2025-12-01T00:00:05Z: the window is empty";
  const UNTIL_1S = "--since 2025-12-01T00:00:05Z is after --until 1s (2025-12-01T00:00:01.000Z, from the capture's start at 2025-12-01T00:00:00.000Z): the window is empty";

  it.each([
    ['analyze', [MIX]],
    ['analyze', [MIX, '--format', 'json']],
    ['analyze', [MIX, '--format', 'junit']],
    ['requests', [MIX]],
    ['requests', [MIX, '--format', 'ndjson']],
    ['clients', [MIX]],
    ['telemetry', [MIX]],
  ])('%s %j: an offset after a time is one line and exit 2', async (command, args) => {
    expect(await runKcid([command, ...args, '--since', '7s', '--until', '2025-12-01T00:00:05Z'])).toEqual({ code: 2, stdout: '', stderr: `kcid: ${SINCE_7S}\n` });
    expect(await runKcid([command, ...args, '--since', '2025-12-01T00:00:05Z', '--until', '1s'])).toEqual({ code: 2, stdout: '', stderr: `kcid: ${UNTIL_1S}\n` });
  });

  it('export and merge too; a window that holds time is not refused', async () => {
    const lake = tmpDir();
    expect(await runKcid(['export', MIX, '--to', lake, '--since', '7s', '--until', '2025-12-01T00:00:05Z'])).toMatchObject({ code: 2, stderr: `kcid: ${SINCE_7S}\n` });
    const summary = join(tmpDir(), 'mix.json');
    writeFileSync(summary, (await runKcid(['analyze', MIX, '--format', 'summary-json'])).stdout);
    expect(await runKcid(['merge', summary, '--since', '7s', '--until', '2025-12-01T00:00:05Z'])).toEqual({ code: 2, stdout: '', stderr: `kcid: ${SINCE_7S}\n` });
    const open = await runKcid(['analyze', MIX, '--format', 'json', '--since', '1ms', '--until', '2025-12-01T00:00:05Z']);
    expect([open.code, open.stderr]).toEqual([1, '']);
  });
});

describe('one capture given twice by any path', () => {
  const dir = tmpDir();
  const F = join(dir, 'F.pcapng');
  copyFileSync(MIX, F);
  symlinkSync(F, join(dir, 'link.pcapng'));
  linkSync(F, join(dir, 'hard.pcapng'));
  const kcid = (args: string[]) => runKcid(args, { cwd: dir });

  // Paths are read from the test's current folder (the repository): F relative to it, the rest as named.
  const relF = relative(process.cwd(), F);
  it.each([
    ['./ before it', `./${relF}`],
    ['an absolute path', F],
    ['a doubled slash', `${dir}//F.pcapng`],
    ['a symlink', join(dir, 'link.pcapng')],
    ['a hard link', join(dir, 'hard.pcapng')],
  ])('F and F by %s', async (_, other) => {
    expect(await kcid(['analyze', relF, other])).toEqual({ code: 2, stdout: '', stderr: `kcid: capture '${other}' is the same file as '${relF}': it is given twice\n` });
  });

  it('every command that reads captures or summaries refuses it; the exact same path keeps its message', async () => {
    for (const command of [['requests'], ['clients'], ['telemetry'], ['export', '--to', tmpDir()]]) {
      const r = await kcid([...command, F, join(dir, 'link.pcapng')]);
      expect([command[0], r.code, r.stderr]).toEqual([command[0], 2, `kcid: capture '${join(dir, 'link.pcapng')}' is the same file as '${F}': it is given twice\n`]);
    }
    const summary = join(dir, 's.json');
    writeFileSync(summary, (await runKcid(['analyze', MIX, '--format', 'summary-json'])).stdout);
    symlinkSync(summary, join(dir, 's2.json'));
    expect((await kcid(['merge', summary, join(dir, 's2.json')])).stderr).toBe(`kcid: summary '${join(dir, 's2.json')}' is the same file as '${summary}': it is given twice\n`);
    expect(await kcid(['analyze', F, F])).toEqual({ code: 2, stdout: '', stderr: `kcid: capture '${F}' is given twice\n` });
  });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('--follow ends on SIGTERM and SIGHUP as on Ctrl-C', () => {
  it.each(['SIGTERM', 'SIGHUP', 'SIGINT'] as const)('%s: the summary of what was read, and the gate exit code', async (signal) => {
    const child = spawn(process.execPath, ['bin/kcid', 'analyze', '-', '--follow'], { env: { ...process.env, NO_COLOR: '1' }, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<[number | null, string | null]>((r) => child.on('exit', (code, sig) => r([code, sig])));
    // Past the payments-api violations (frame 45 ends near byte 6,000); the input stays open.
    child.stdin.write(MIX_BYTES.subarray(0, 7500));
    for (let waited = 0; !out.includes('client-id-after-first') && waited < 20_000; waited += 50) await sleep(50);
    child.kill(signal);
    const [code, killedBy] = await exited;
    child.stdin.destroy();
    expect([code, killedBy, stderr]).toEqual([1, null, '']);
    // Findings come as their evidence is complete: the telemetry push of frame 17 first, the ClientId of frame 42 later.
    expect(out.split('\n')[0]).toMatch(/^2025-12-01T00:00:00\.001Z {2}warning {2}telemetry-push-too-soon {2}frame 17 /);
    expect(out).toMatch(/\n2025-12-01T00:00:00\.004Z {2}error {2}client-id-after-first {2}frame 42 /);
    expect(out).toMatch(/\n1 capture, \d+ packets, \d+ Kafka connections/);
  }, 30_000);
});

describe('--jobs is capped by cores and inputs', () => {
  const ctx = (cores: number): PlanContext => ({ config: { file: null, rules: new Map() }, given: () => false, cores, env: {} });
  const four = ['a.pcap', 'b.pcap', 'c.pcap', 'd.pcap'];

  it('-j 256 on 2 cores runs 2 at once; on one input, 1', () => {
    expect(planAnalyze(four, { detect: true, format: 'json', failOn: 'error', jobs: '256' }, ctx(2)).jobs).toBe(2);
    expect(planAnalyze(['a.pcap'], { detect: true, format: 'json', failOn: 'error', jobs: '256' }, ctx(2)).jobs).toBe(1);
    expect(planClients(four, { detect: true, format: 'json', jobs: '3' }, ctx(64)).jobs).toBe(3);
    expect(planTelemetry(four, { detect: true, format: 'json', jobs: '256' }, ctx(3)).jobs).toBe(3);
  });

  it('by default the cores minus one, within the inputs', () => {
    expect(planAnalyze(four, { detect: true, format: 'json', failOn: 'error' }, ctx(2)).jobs).toBe(1);
    expect(planAnalyze(four, { detect: true, format: 'json', failOn: 'error' }, ctx(64)).jobs).toBe(4);
    expect(planAnalyze(four, { detect: true, format: 'json', failOn: 'error' }, ctx(1)).jobs).toBe(1);
  });
});
