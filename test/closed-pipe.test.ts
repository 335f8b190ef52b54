/**
 * Exit status under a closed pipe (issue 26, item 10): a reader that stops early (`| head`) never
 * turns a finding at or above --fail-on into exit 0. Real pipes, real processes.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const MIX = 'fixtures/kip1313-mix.pcapng';
const MIX_BYTES = readFileSync(MIX);

/** `pipeline` under bash with pipefail: the pipeline's status and kcid's own. */
function bash(pipeline: string): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync('bash', ['-c', `set -o pipefail; ${pipeline}; echo "pipeline $? kcid \${PIPESTATUS[0]}"`], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const kcid = `"${process.execPath}" bin/kcid`;

describe('a reader that stops early', () => {
  it.each(['table', 'json', 'ndjson', 'sarif', 'junit', 'markdown', 'html'])('analyze --format %s | head: the gate still fails (exit 1)', (format) => {
    // head -c 0 leaves before kcid writes a byte: every write meets a closed pipe.
    expect(bash(`${kcid} analyze ${MIX} --format ${format} | head -c 0`)).toEqual({ status: 0, stdout: 'pipeline 1 kcid 1\n', stderr: '' });
    expect(bash(`${kcid} analyze ${MIX} --format ${format} | head -c 100 > /dev/null`)).toEqual({ status: 0, stdout: 'pipeline 1 kcid 1\n', stderr: '' });
  });

  it('below --fail-on, and commands without a gate, exit 0 as before', () => {
    expect(bash(`${kcid} analyze ${MIX} --fail-on none | head -c 0`).stdout).toBe('pipeline 0 kcid 0\n');
    expect(bash(`${kcid} requests ${MIX} --format ndjson | head -c 0`).stdout).toBe('pipeline 0 kcid 0\n');
  });

  it('--follow: the findings printed so far decide, and kcid stops reading though its input stays open', async () => {
    const child = spawn(process.execPath, ['bin/kcid', 'analyze', '-', '--follow'], { env: { ...process.env, NO_COLOR: '1' }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    const firstLine = new Promise<void>((r) => child.stdout.once('data', () => r()));
    child.stdin.write(MIX_BYTES.subarray(0, 7500));
    await firstLine;
    // The reader goes away; the rest of the capture makes kcid write again, into the closed pipe.
    child.stdout.destroy();
    child.stdin.write(MIX_BYTES.subarray(7500));
    const code = await exited;
    child.stdin.destroy();
    expect([code, stderr]).toEqual([1, '']);
  }, 30_000);
});
