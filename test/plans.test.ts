/**
 * Every command's plan, run without reading anything: each usage error's exact line and exit code,
 * and the typed plan a good command line makes (config file settings, --jobs caps, body modes).
 */
import { describe, expect, it } from 'vitest';
import { planAnalyze, type AnalyzeCliOptions } from '../src/cli/analyze-command.js';
import { planClients, type ClientsCliOptions } from '../src/cli/clients-command.js';
import type { Config } from '../src/cli/config.js';
import { planExport, type ExportCliOptions } from '../src/cli/export-command.js';
import { planMerge, type MergeCliOptions } from '../src/cli/merge-command.js';
import { planned, type PlanContext } from '../src/cli/plan.js';
import { DEFAULT_MAX_BODY_BYTES, planRequests, type RequestsCliOptions } from '../src/cli/requests-command.js';
import { planTelemetry, type TelemetryCliOptions } from '../src/cli/telemetry-command.js';

const noConfig: Config = { file: null, rules: new Map() };
const ctx = (over: Partial<PlanContext> = {}): PlanContext => ({ config: noConfig, given: () => false, cores: 8, env: {}, ...over });

const analyzeOpts = (o: Partial<AnalyzeCliOptions> = {}): AnalyzeCliOptions => ({ detect: true, format: 'table', failOn: 'error', ...o });
const requestsOpts = (o: Partial<RequestsCliOptions> = {}): RequestsCliOptions => ({ detect: true, format: 'table', ...o });
const clientsOpts = (o: Partial<ClientsCliOptions> = {}): ClientsCliOptions => ({ detect: true, format: 'table', ...o });
const exportOpts = (o: Partial<ExportCliOptions> = {}): ExportCliOptions => ({ detect: true, to: 'lake', ...o });
const telemetryOpts = (o: Partial<TelemetryCliOptions> = {}): TelemetryCliOptions => ({ detect: true, format: 'table', ...o });
const mergeOpts = (o: Partial<MergeCliOptions> = {}): MergeCliOptions => ({ format: 'table', failOn: 'error', ...o });

const error = (message: string) => ({ error: message, exitCode: 2 });

/** The usage errors every capture-reading command shares, with the options that cause them. */
const COMMON: [Record<string, unknown>, string][] = [
  [{ port: '9092,0' }, "invalid port '0' in --port (expected numbers from 1 to 65535, separated by commas)"],
  [{ port: 'kafka' }, "invalid port 'kafka' in --port (expected numbers from 1 to 65535, separated by commas)"],
  [{ maxFrameBytes: 'lots' }, "invalid size 'lots' for --max-frame-bytes (e.g. 104857600, 100MiB, 64KiB)"],
  [{ maxFrameBytes: '8' }, "--max-frame-bytes must be between 16 bytes and 2 GiB - 1, got '8'"],
  [{ maxConnections: '0' }, "invalid --max-connections '0' (expected a whole number from 1 to 10,000,000)"],
  [{ idleTimeout: '1.5' }, "invalid --idle-timeout '1.5' (expected a whole number from 1 to 31,536,000)"],
  [{ maxConnectionSummaries: '-1' }, "invalid --max-connection-summaries '-1' (expected a whole number from 1 to 100,000,000)"],
  [{ maxFindings: '100000001' }, "invalid --max-findings '100000001' (expected a whole number from 1 to 100,000,000)"],
  [{ maxTelemetryBytes: '4GiB' }, "--max-telemetry-bytes must be between 16 bytes and 2 GiB - 1, got '4GiB'"],
  [{ client: 'a b' }, "invalid --client 'a b' (expected HOST or HOST:PORT, IPv6 as [addr]:port)"],
  [{ broker: 'broker:99999' }, "invalid --broker 'broker:99999' (expected HOST or HOST:PORT, IPv6 as [addr]:port)"],
  [{ api: 'Produce,Nope' }, "unknown API 'Nope' in --api (use names such as Produce,Fetch or numeric keys)"],
  [
    { since: 'yesterday' },
    "invalid --since 'yesterday' (expected a UTC time such as 2026-12-01, 2026-12-01 02:00:00 or 2026-12-01T02:00:00Z, or an offset from the capture start such as 90s or 5m)",
  ],
  [{ until: '2025-02-30' }, "invalid --until '2025-02-30' (expected a UTC time such as 2026-12-01, 2026-12-01 02:00:00 or 2026-12-01T02:00:00Z, or an offset from the capture start such as 90s or 5m)"],
  [{ since: '2025-12-02', until: '2025-12-01' }, '--since is after --until: the window is empty'],
  [{ since: '10s', until: '5s' }, '--since is after --until: the window is empty'],
];

const CAPTURE_COMMANDS = {
  analyze: (captures: string[], o: Record<string, unknown>, c = ctx()) => planned(() => planAnalyze(captures, analyzeOpts(o), c)),
  requests: (captures: string[], o: Record<string, unknown>, c = ctx()) => planned(() => planRequests(captures, requestsOpts(o), c)),
  clients: (captures: string[], o: Record<string, unknown>, c = ctx()) => planned(() => planClients(captures, clientsOpts(o), c)),
  export: (captures: string[], o: Record<string, unknown>, c = ctx()) => planned(() => planExport(captures, exportOpts(o), c)),
  telemetry: (captures: string[], o: Record<string, unknown>, c = ctx()) => planned(() => planTelemetry(captures, telemetryOpts(o), c)),
};

describe('plans of the commands that read captures', () => {
  for (const [name, plan] of Object.entries(CAPTURE_COMMANDS)) {
    it(`${name}: every shared option error, one line, exit 2`, () => {
      for (const [o, message] of COMMON) expect([o, plan(['a.pcap'], o)]).toEqual([o, error(message)]);
      expect(plan(['a.pcap', 'b.pcap', 'a.pcap'], {})).toEqual(error("capture 'a.pcap' is given twice"));
      expect(plan(['-', '-'], {})).toEqual(error("'-' (stdin) can be given only once"));
    });

    it(`${name}: -t l with a TZ that names no zone`, () => {
      // export writes no times as text.
      if (name === 'export') return expect('plan' in plan(['a.pcap'], { timeFormat: 'l' }, ctx({ env: { TZ: 'Mars/Olympus' } }))).toBe(true);
      const o = name === 'clients' ? { timeFormat: 'l', instance: 'AAAA' } : { timeFormat: 'l' };
      const result = plan(['a.pcap'], o, ctx({ env: { TZ: 'Mars/Olympus' } }));
      expect(result).toEqual(error('unknown time zone TZ=Mars/Olympus (expected a name such as Europe/Paris or UTC)'));
      expect('plan' in plan(['a.pcap'], o, ctx({ env: { TZ: 'Europe/Paris' } }))).toBe(true);
    });
  }

  for (const name of ['analyze', 'clients', 'export', 'telemetry'] as const) {
    it(`${name}: --rule errors`, () => {
      const plan = CAPTURE_COMMANDS[name];
      expect(plan(['a.pcap'], { rule: ['member-id-mismatch'] })).toEqual(error("invalid --rule 'member-id-mismatch' (expected RULE=SEVERITY, e.g. member-id-mismatch=off)"));
      expect(plan(['a.pcap'], { rule: ['member-id-mismatc=off'] })).toEqual(error("unknown rule 'member-id-mismatc' in --rule (did you mean member-id-mismatch?)"));
      expect(plan(['a.pcap'], { rule: ['member-id-mismatch=fatal'] })).toEqual(error("invalid severity 'fatal' in --rule member-id-mismatch=fatal (expected error, warning, info or off)"));
    });
  }

  for (const name of ['analyze', 'clients', 'telemetry'] as const) {
    it(`${name}: --jobs`, () => {
      const plan = CAPTURE_COMMANDS[name];
      for (const jobs of ['0', '257', 'many', '1.5']) expect(plan(['a.pcap'], { jobs })).toEqual(error(`invalid --jobs '${jobs}' (expected a whole number from 1 to 256)`));
    });
  }
});

describe('analyze', () => {
  const plan = CAPTURE_COMMANDS.analyze;

  it('--follow reads one input in table or ndjson', () => {
    expect(plan(['a.pcap', 'b.pcap'], { follow: true })).toEqual(error('--follow reads one input (use - for stdin)'));
    for (const format of ['json', 'junit', 'sarif', 'markdown', 'html', 'summary-json', 'parquet']) {
      expect(plan(['-'], { follow: true, format, output: 'x' })).toEqual(error(`--follow writes table or ndjson, not ${format}`));
    }
  });

  it('--format parquet needs -o', () => {
    expect(plan(['a.pcap'], { format: 'parquet' })).toEqual(error('--format parquet writes a file: give it with -o FILE'));
  });

  it('the config file fills what the command line left, and the command line wins', () => {
    const config: Config = { file: 'kcid.config.json', rules: new Map([['member-id-mismatch', 'off']]), failOn: 'warning', port: [9093, 19093], maxFrameBytes: 4096 };
    const fromFile = planAnalyze(['a.pcap'], analyzeOpts({ rule: ['capture-gap=info'] }), ctx({ config }));
    expect(fromFile.report.failOn).toBe('warning');
    expect([...fromFile.capture.kafkaPorts]).toEqual([9093, 19093]);
    expect(fromFile.capture.maxFrameBytes).toBe(4096);
    expect([...fromFile.report.severities]).toEqual([
      ['member-id-mismatch', 'off'],
      ['capture-gap', 'info'],
    ]);
    const cli = planAnalyze(['a.pcap'], analyzeOpts({ failOn: 'none', port: '9092', maxFrameBytes: '1MiB' }), ctx({ config, given: () => true }));
    expect([cli.report.failOn, [...cli.capture.kafkaPorts], cli.capture.maxFrameBytes]).toEqual(['none', [9092], 1048576]);
  });

  it('html and summary-json collect activity; --telemetry decodes every push', () => {
    expect(planAnalyze(['a.pcap'], analyzeOpts({ format: 'html' }), ctx()).capture.activity).toBe(true);
    expect(planAnalyze(['a.pcap'], analyzeOpts({ format: 'json' }), ctx()).capture.activity).toBeUndefined();
    const t = planAnalyze(['a.pcap'], analyzeOpts({ telemetry: true }), ctx());
    expect([t.capture.decodeTelemetry, t.capture.telemetry, t.report.telemetry]).toEqual([true, undefined, true]);
    expect(planAnalyze(['a.pcap'], analyzeOpts(), ctx()).capture.telemetry).toBe('rules');
  });
});

describe('requests', () => {
  const plan = CAPTURE_COMMANDS.requests;

  it('usage errors', () => {
    expect(plan(['a.pcap', 'b.pcap'], { follow: true })).toEqual(error('--follow reads one input (use - for stdin)'));
    expect(plan(['a.pcap'], { maxBodyBytes: '1MiB' })).toEqual(error('--max-body-bytes goes with --bodies'));
    expect(plan(['a.pcap'], { bodies: true, maxBodyBytes: '1 parsec' })).toEqual(error("invalid size '1 parsec' for --max-body-bytes (e.g. 104857600, 100MiB, 64KiB)"));
    expect(plan(['a.pcap'], { format: 'parquet' })).toEqual(error('--format parquet writes a file: give it with -o FILE'));
    expect(plan(['-'], { format: 'parquet', follow: true })).toEqual(error('--format parquet writes a file: give it with -o FILE'));
    expect(plan(['-'], { format: 'parquet', follow: true, output: 'r.parquet' })).toEqual(error('--follow writes table or ndjson, not parquet'));
  });

  it('how each format carries bodies', () => {
    const p = (o: Partial<RequestsCliOptions>) => planRequests(['a.pcap'], requestsOpts(o), ctx());
    expect([p({}).bodies, p({}).telemetryBytes, p({}).capture.maxBodyBytes]).toEqual([false, null, undefined]);
    const table = p({ bodies: true });
    expect([table.bodies, table.capture.maxBodyBytes, table.capture.bodyForm, table.telemetryBytes]).toEqual(['summary', DEFAULT_MAX_BODY_BYTES, undefined, 16 * 1024 * 1024]);
    const ndjson = p({ bodies: true, format: 'ndjson', maxBodyBytes: '64KiB', maxTelemetryBytes: '1MiB' });
    expect([ndjson.bodies, ndjson.capture.maxBodyBytes, ndjson.capture.bodyForm, ndjson.telemetryBytes]).toEqual(['json', 65536, 'json', 1048576]);
    expect(p({ bodies: true, format: 'parquet', output: 'r.parquet' }).bodies).toBe(false);
    // Rows show no findings: nothing is judged.
    expect([p({}).capture.judge, p({}).capture.telemetry]).toEqual([false, 'off']);
  });
});

describe('export', () => {
  it('--jobs does not apply', () => {
    expect(CAPTURE_COMMANDS.export(['a.pcap'], { jobs: '2' })).toEqual(
      error('kcid export reads its captures one after another: --jobs does not apply (run several exports at once instead)'),
    );
  });
});

describe('merge', () => {
  const plan = (files: string[], o: Partial<MergeCliOptions>, c = ctx()) => planned(() => planMerge(files, mergeOpts(o), c));

  it('usage errors', () => {
    expect(plan(['a.json', 'a.json'], {})).toEqual(error("summary 'a.json' is given twice"));
    expect(plan(['a.json'], { format: 'parquet' })).toEqual(error('--format parquet writes a file: give it with -o FILE'));
    expect(plan(['a.json'], { since: '2025-12-02', until: '2025-12-01' })).toEqual(error('--since is after --until: the window is empty'));
    expect(plan(['a.json'], { rule: ['nope=off'] })).toEqual(error("unknown rule 'nope' in --rule (see 'kcid rules' for the list)"));
    const mars = ctx({ env: { TZ: 'Mars/Olympus' } });
    expect(plan(['a.json'], { format: 'table', timeFormat: 'l' }, mars)).toEqual(error('unknown time zone TZ=Mars/Olympus (expected a name such as Europe/Paris or UTC)'));
    // Only the table shows times.
    expect('plan' in plan(['a.json'], { format: 'json', timeFormat: 'l' }, mars)).toBe(true);
  });
});

describe('what a plan leaves to the run (it reads no file)', () => {
  it('a key log is checked when the run starts, with the same one line', async () => {
    const { runKcid } = await import('./helpers.js');
    const { tmpDir } = await import('./builder/capture.js');
    expect('plan' in CAPTURE_COMMANDS.analyze(['a.pcap'], { tlsKeylog: ['/nonexistent/keys.log'] })).toBe(true);
    expect(await runKcid(['analyze', 'fixtures/kip1313-mix.pcapng', '--tls-keylog', '/nonexistent/keys.log'])).toEqual({
      code: 2,
      stdout: '',
      stderr: 'kcid: --tls-keylog /nonexistent/keys.log: no such file\n',
    });
    const dir = tmpDir();
    expect(await runKcid(['requests', 'fixtures/kip1313-mix.pcapng', '--tls-keylog', dir])).toEqual({ code: 2, stdout: '', stderr: `kcid: --tls-keylog ${dir}: not a file\n` });
  });
});
