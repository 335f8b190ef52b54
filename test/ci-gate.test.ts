/**
 * The CI gate from the command line: rule settings (--rule, kcid.config.json, --config), baselines,
 * --output, and every report format reachable from `kcid analyze`.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runKcid } from './helpers.js';
import { tmpDir } from './builder/capture.js';

const MIX = join(process.cwd(), 'fixtures/kip1313-mix.pcapng');

const kcid = (args: string[], cwd?: string) => runKcid(args, cwd === undefined ? {} : { cwd });

const counts = (stdout: string) => (JSON.parse(stdout) as { summary: { findings: Record<string, number> } }).summary.findings;

describe('rule settings', () => {
  it('--rule changes a severity or turns a rule off', async () => {
    const r = await kcid(['analyze', MIX, '--format', 'json', '--rule', 'client-id-after-first=warning', '--rule', 'capture-gap=off']);
    expect(counts(r.stdout)).toEqual({ error: 13, warning: 7, info: 1 });
    const doc = JSON.parse(r.stdout) as { findings: { rule: string; severity: string }[] };
    expect(doc.findings.filter((f) => f.rule === 'client-id-after-first').map((f) => f.severity)).toEqual(['warning', 'warning']);
    expect(doc.findings.some((f) => f.rule === 'capture-gap')).toBe(false);
  });

  it('kcid.config.json in the current folder applies, and the command line wins over it', async () => {
    const dir = tmpDir();
    writeFileSync(join(dir, 'kcid.config.json'), JSON.stringify({ rules: { 'member-id-mismatch': 'off', 'zero-client-instance-id': 'warning' }, failOn: 'warning' }));
    const fromFile = await kcid(['analyze', MIX, '--format', 'json', '--rule', 'client-id-after-first=off', '--rule', 'broker-accepted-invalid=info', '--rule', 'broker-assigned-instance-id=info', '--rule', 'telemetry-zero-id-with-header=info', '--rule', 'telemetry-id-mismatch=info', '--rule', 'telemetry-v1-without-instance-id=info', '--rule', 'client-instance-id-changed=info', '--rule', 'client-instance-id-missing=info', '--rule', 'malformed-request-header=info', '--rule', 'telemetry-payload-invalid=info', '--rule', 'telemetry-push-without-subscription=info'], dir);
    // Only warnings are left, and the file's failOn (warning) makes them fail the run.
    expect(counts(fromFile.stdout)).toEqual({ error: 0, warning: 5, info: 14 });
    expect(fromFile.code).toBe(1);
    const cliWins = await kcid(['analyze', MIX, '--format', 'json', '--fail-on', 'none', '--rule', 'member-id-mismatch=error'], dir);
    expect(cliWins.code).toBe(0);
    expect((JSON.parse(cliWins.stdout) as { findings: { rule: string; severity: string }[] }).findings.find((f) => f.rule === 'member-id-mismatch')!.severity).toBe('error');
  });

  it('--config FILE, and clear one-line errors for unknown rules and severities', async () => {
    const dir = tmpDir();
    const file = join(dir, 'gate.json');
    writeFileSync(file, JSON.stringify({ rules: { 'member-id-mismatch': 'off' } }));
    expect(counts((await kcid(['analyze', MIX, '--format', 'json', '--config', file])).stdout)).toEqual({ error: 15, warning: 4, info: 2 });
    const unknown = await kcid(['analyze', MIX, '--rule', 'member-id-mismatc=off']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr.split('\n')).toHaveLength(2);
    expect(unknown.stderr).toMatch(/^kcid: .*member-id-mismatc.*member-id-mismatch/);
    const badSeverity = await kcid(['analyze', MIX, '--rule', 'member-id-mismatch=fatal']);
    expect(badSeverity.code).toBe(2);
    expect(badSeverity.stderr).toMatch(/^kcid: .*fatal/);
    expect((await kcid(['analyze', MIX, '--config', join(dir, 'missing.json')])).code).toBe(2);
  });
});

describe('baseline', () => {
  it('records findings, then reports only new ones and says how many were suppressed', async () => {
    const dir = tmpDir();
    const baseline = join(dir, 'kcid-baseline.json');
    const first = await kcid(['analyze', MIX, '--format', 'json', '--write-baseline', baseline]);
    expect(first.code).toBe(1);
    expect(existsSync(baseline)).toBe(true);
    const second = await kcid(['analyze', MIX, '--format', 'json', '--baseline', baseline]);
    expect(second.code).toBe(0);
    const doc = JSON.parse(second.stdout) as { summary: { findings: Record<string, number>; suppressed: number } };
    expect(doc.summary.findings).toEqual({ error: 0, warning: 0, info: 0 });
    expect(doc.summary.suppressed).toBe(22);
    const table = await kcid(['analyze', MIX, '--baseline', baseline]);
    expect(table.stdout.split('\n')[0]).toMatch(/22 suppressed by the baseline$/);
    expect((await kcid(['analyze', MIX, '--baseline', join(dir, 'nope.json')])).stderr).toBe(`kcid: cannot read --baseline ${join(dir, 'nope.json')}: no such file\n`);
    // The same words as --output for a folder that is not there.
    expect(await kcid(['analyze', MIX, '--write-baseline', '/nonexistent/b.json'])).toMatchObject({ code: 2, stderr: 'kcid: cannot write --write-baseline /nonexistent/b.json: no such folder\n' });
    expect(await kcid(['analyze', MIX, '--write-baseline', dir])).toMatchObject({ code: 2, stderr: `kcid: cannot write --write-baseline ${dir}: is a directory\n` });
  });
});

describe('formats and --output', () => {
  it('writes each format to --output and nothing to stdout', async () => {
    const dir = tmpDir();
    for (const [format, check] of [
      ['junit', (t: string) => t.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites')],
      ['sarif', (t: string) => (JSON.parse(t) as { version: string }).version === '2.1.0'],
      ['markdown', (t: string) => t.startsWith('## ❌ kcid:')],
      ['ndjson', (t: string) => t.trimEnd().split('\n').length === 22],
      ['json', (t: string) => (JSON.parse(t) as { version: number }).version === 1],
      ['summary-json', (t: string) => t.startsWith('{"kind":"kcid-summary"')],
    ] as const) {
      const file = join(dir, `out.${format}`);
      const r = await kcid(['analyze', MIX, '--format', format, '--output', file]);
      expect(r.stdout).toBe('');
      expect(r.code).toBe(1);
      expect(check(readFileSync(file, 'utf8'))).toBe(true);
    }
    expect((await kcid(['analyze', MIX, '--output', join(dir, 'no/such/dir/x')])).stderr).toBe(`kcid: cannot write --output ${join(dir, 'no/such/dir/x')}: no such folder\n`);
  });
});

describe('gates mean what they say', () => {
  it('JUnit fails only what --fail-on fails: a warning with --fail-on error is a passed test case', async () => {
    const args = ['analyze', MIX, '--api', 'ConsumerGroupHeartbeat', '--format', 'junit'];
    const passed = await kcid(args);
    expect(passed.code).toBe(0);
    expect(passed.stdout).toContain('<testsuites name="kcid" tests="41" failures="0" errors="0" time="0">');
    expect(passed.stdout).toContain(
      `    <testcase classname="kcid" name="member-id-mismatch" time="0">\n      <system-out>${MIX} frame 53, 10.2.0.25:44001 -&gt; 10.1.0.13:9092, ConsumerGroupHeartbeat v0, correlation 3: MemberId &quot;Tq3nWZ0bR1ubfIX6i9-Dfw&quot; is not the client instance ID DZ6PemtcTT6PGis8TV5vcA</system-out>\n`,
    );
    const failed = await kcid([...args, '--fail-on', 'warning']);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toContain('<testsuites name="kcid" tests="41" failures="1" errors="0" time="0">');
    expect(failed.stdout).toContain('<failure type="warning" message="1 warning">');
  });

  it('SARIF results carry the level --rule gave, and the run lists the overrides', async () => {
    const r = await kcid(['analyze', MIX, '--format', 'sarif', '--rule', 'member-id-mismatch=error', '--rule', 'capture-gap=off']);
    const run = (JSON.parse(r.stdout) as { runs: { invocations: unknown; results: { ruleId: string; level: string }[] }[] }).runs[0]!;
    expect(run.results.filter((x) => x.ruleId === 'member-id-mismatch').map((x) => x.level)).toEqual(['error']);
    expect(run.results.some((x) => x.ruleId === 'capture-gap')).toBe(false);
    expect(run.invocations).toEqual([
      {
        executionSuccessful: true,
        ruleConfigurationOverrides: [
          { descriptor: { id: 'member-id-mismatch', index: 11 }, configuration: { level: 'error' } },
          { descriptor: { id: 'capture-gap', index: 16 }, configuration: { enabled: false } },
        ],
      },
    ]);
  });
});
