/**
 * Every table fits the terminal: `analyze`, `clients`, `clients --instance`, `rules`, `telemetry` rendered at
 * 80, 120 and 200 columns through the table code's width (a fake terminal in-process), compared
 * as exact text with test/golden/render-*.txt (UPDATE_GOLDEN=1 rewrites them: review the diff),
 * and once through a real pseudo-terminal (`script` from util-linux).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { checkGolden, golden, HAVE_SCRIPT, NO_SCRIPT, runKcid, skipUnless } from './helpers.js';

const MIX = 'fixtures/kip1313-mix.pcapng';
const TELEMETRY = 'fixtures/ckjs-mock-telemetry.pcap';

const COMMANDS: [name: string, args: string[]][] = [
  ['analyze', ['analyze', MIX]],
  ['clients', ['clients', TELEMETRY]],
  ['clients-mix', ['clients', MIX]],
  ['clients-instance', ['clients', MIX, '--instance', 'xaHn']],
  ['rules', ['rules']],
  ['telemetry', ['telemetry', TELEMETRY]],
];

describe.each(COMMANDS)('%s', (name, args) => {
  it.each([80, 120, 200])('fits %i columns, no line wider', async (columns) => {
    const r = await runKcid(args, { tty: true, columns, env: { NO_COLOR: '1' }, cwd: process.cwd() });
    checkGolden(`render-${name}.${columns}.txt`, r.stdout);
    for (const line of r.stdout.split('\n')) expect([...line].length, line).toBeLessThanOrEqual(columns);
  });
});

describe('through a real pseudo-terminal', () => {
  it.each([
    ['analyze', 80],
    ['clients', 80],
    ['clients-instance', 120],
    ['telemetry', 80],
    ['telemetry', 200],
  ] as const)('kcid %s at %i columns prints what the width parameter gives', skipUnless(HAVE_SCRIPT, NO_SCRIPT), (name, columns) => {
    const args = COMMANDS.find((c) => c[0] === name)![1].join(' ');
    const r = spawnSync('script', ['-qc', `stty cols ${columns} rows 50; exec "${process.execPath}" bin/kcid ${args}`, '/dev/null'], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
    expect(r.stdout.replace(/\r\n/g, '\n')).toBe(readFileSync(golden(`render-${name}.${columns}.txt`), 'utf8'));
  });
});

describe('kcid analyze - at a terminal with nothing piped in', () => {
  it('says on stderr what it is waiting for', skipUnless(HAVE_SCRIPT, NO_SCRIPT), () => {
    // --foreground: kcid must be the terminal's foreground job, or its first read of it stops it
    // (SIGTTIN) and the run can hang there; -k: KILL after TERM. spawnSync's own timeout is the last guard.
    const r = spawnSync('script', ['-qc', `timeout --foreground -k 2 3 "${process.execPath}" bin/kcid analyze - 2>&1`, '/dev/null'], { encoding: 'utf8', input: '', timeout: 20_000 });
    expect(r.stdout.replace(/\r\n/g, '\n').split('\n')[0]).toBe(
      'kcid: reading a capture from standard input (the terminal): pipe one in, e.g. tcpdump -U -w - | kcid analyze -, or press Ctrl-D',
    );
  });

  it('says nothing when a capture is piped in', () => {
    const r = spawnSync(process.execPath, ['bin/kcid', 'analyze', '-', '--format', 'json'], { input: readFileSync(MIX), encoding: 'utf8' });
    expect(r.stderr).toBe('');
  });
});
