/**
 * The command line: exit codes, one-line errors, formats, stdin and gzip, colour. Most cases call
 * run() in-process with a fake Io; a few spawn bin/kcid to check the real process (stdin, exit code).
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NO_SHARED, runKcid, skipUnless, type CliResult as Result } from './helpers.js';
import { HAVE_SHARED } from './real/captures.js';
import { tmpDir, tmpFile } from './builder/capture.js';
import { Scenario } from './builder/scenario.js';
import { MIX_IDS } from './fixtures/kip1313-mix.js';
import { RULES } from '../src/analysis/rules/index.js';
import { floodCapture } from '../scripts/fuzz/flood.js';

const MIX = 'fixtures/kip1313-mix.pcapng';
const KCAT = 'fixtures/kcat-mock-produce.pcap';
const VERSION = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;


const kcid = runKcid;

function spawnKcid(args: string[], input?: Buffer): Result {
  const r = spawnSync(process.execPath, ['bin/kcid', ...args], { input, env: { ...process.env, NO_COLOR: '1' }, maxBuffer: 64 << 20 });
  return { code: r.status ?? -1, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

describe('commander conventions', () => {
  it('--version prints the package version', async () => {
    expect(await kcid(['--version'])).toEqual({ code: 0, stdout: `${VERSION}\n`, stderr: '' });
  });

  it('--help lists the commands and exits 0', async () => {
    const r = await kcid(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Usage: kcid [options] [command]');
    for (const cmd of ['analyze', 'requests', 'rules']) expect(r.stdout).toContain(`  ${cmd} `);
  });

  it.each([
    [['frobnicate'], "kcid: unknown command 'frobnicate'\n"],
    [['analyze'], "kcid: missing required argument 'captures'\n"],
    [['analyze', MIX, '--format', 'xml'], "kcid: option '-f, --format <format>' argument 'xml' is invalid. Allowed choices are table, json, ndjson, junit, sarif, markdown, html, summary-json, parquet.\n"],
    [['analyze', MIX, '--fail-on', 'fatal'], "kcid: option '--fail-on <severity>' argument 'fatal' is invalid. Allowed choices are error, warning, info, none.\n"],
    [['analyze', MIX, '--port', '9092,70000'], "kcid: invalid port '70000' in --port (expected numbers from 1 to 65535, separated by commas)\n"],
    [['analyze', MIX, '--max-frame-bytes', 'lots'], "kcid: invalid size 'lots' for --max-frame-bytes (e.g. 104857600, 100MiB, 64KiB)\n"],
    [['rules', 'no-such-rule'], "kcid: unknown rule 'no-such-rule' (see 'kcid rules' for the list)\n"],
    [['analyze', MIX, '--max-connections', '0'], "kcid: invalid --max-connections '0' (expected a whole number from 1 to 10,000,000)\n"],
    [['analyze', MIX, '--idle-timeout', 'soon'], "kcid: invalid --idle-timeout 'soon' (expected a whole number from 1 to 31,536,000)\n"],
  ])('usage error %j exits 2 with one line', async (args, message) => {
    const r = await kcid(args);
    expect(r.code).toBe(2);
    expect(r.stderr.split('\n')[0] + '\n').toBe(message);
    expect(r.stdout).toBe('');
  });
});

describe('bad inputs: one line on stderr, exit 2', () => {
  const dir = tmpDir();
  it.each([
    ['a missing file', `${dir}/nope.pcap`, `kcid: ${dir}/nope.pcap: no such file\n`],
    ['a directory', dir, `kcid: ${dir}: is a directory\n`],
    ['an empty file', tmpFile('empty.pcap', ''), null],
    ['a text file', tmpFile('notes.pcap', '<!DOCTYPE html><html></html>\n'), null],
    ['a truncated pcap header', tmpFile('short.pcap', Buffer.from('d4c3b2a1020004000000000000000000', 'hex')), null],
  ])('%s', async (_what, file, exact) => {
    const r = await kcid(['analyze', file]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.endsWith('\n') && r.stderr.split('\n').length).toBe(2);
    expect(r.stderr.startsWith(`kcid: ${file}: `)).toBe(true);
    if (exact !== null) expect(r.stderr).toBe(exact);
  });

  it('names what is wrong', async () => {
    expect((await kcid(['analyze', tmpFile('empty.pcap', '')])).stderr).toMatch(/: empty file\n$/);
    expect((await kcid(['analyze', tmpFile('t.pcap', '<!DOCTYPE html>\n')])).stderr).toMatch(/: not a pcap or pcapng file/);
    expect((await kcid(['analyze', tmpFile('h.pcap', Buffer.from('d4c3b2a1020004000000000000000000', 'hex'))])).stderr).toMatch(/truncated/);
  });
});

describe('kcid analyze', () => {
  it('exits 1 when a finding reaches --fail-on, 0 otherwise', async () => {
    expect((await kcid(['analyze', MIX])).code).toBe(1);
    expect((await kcid(['analyze', MIX, '--fail-on', 'none'])).code).toBe(0);
    expect((await kcid(['analyze', KCAT])).code).toBe(0);
    // librdkafka's mock answers ApiVersions v3 with bytes over: notes (short-response-tolerated), so --fail-on info fails.
    expect((await kcid(['analyze', KCAT, '--fail-on', 'info'])).code).toBe(1);
    expect((await kcid(['analyze', 'fixtures/kafkajs-mock-group.pcap', '--fail-on', 'info'])).code).toBe(0);
  });

  it('writes the JSON document with its keys in order', async () => {
    const r = await kcid(['analyze', MIX, '--format', 'json']);
    expect(r.code).toBe(1);
    const doc = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(Object.keys(doc)).toEqual(['version', 'inputs', 'summary', 'instances', 'connections', 'findings']);
    expect(doc.version).toBe(1);
    expect(doc.inputs).toEqual([{ file: MIX, format: 'pcapng', packets: 116, bytes: 13632, kafkaPorts: [9092], notes: [] }]);
    expect(doc.summary).toEqual({ connections: 11, requests: 27, responses: 25, instances: 9, findings: { error: 15, warning: 5, info: 2 } });
    const instances = doc.instances as Record<string, unknown>[];
    expect(instances[0]).toEqual({
      clientInstanceId: 'PyUE4E-JQdOaDAMF6CwzAQ',
      clientInstanceIdHex: '3f2504e0-4f89-41d3-9a0c-0305e82c3301',
      source: 'header',
      clientIds: ['orders-service'],
      software: [{ name: 'apache-kafka-java', version: '4.3.0' }],
      clientAddresses: ['10.2.0.21'],
      brokers: ['10.1.0.11:9092', '10.1.0.12:9092'],
      connections: 2,
      requests: 7,
      apis: { Produce: 2, Metadata: 1, ApiVersions: 2, GetTelemetrySubscriptions: 1, PushTelemetry: 1 },
      firstSeen: '2025-12-01T00:00:00.000300Z',
      lastSeen: '2025-12-01T00:00:00.008600Z',
    });
    expect(Object.keys(instances[0]!)).toEqual([
      'clientInstanceId', 'clientInstanceIdHex', 'source', 'clientIds', 'software', 'clientAddresses', 'brokers', 'connections', 'requests', 'apis', 'firstSeen', 'lastSeen',
    ]);
    expect(instances[2]).toMatchObject({ clientInstanceId: 'XE0-LxoLTJ2Of2pbTD0uHw', source: 'telemetry', clientIds: ['legacy-billing'] });
    const connections = doc.connections as Record<string, unknown>[];
    expect(connections[0]).toEqual({ client: '10.2.0.21:40001', broker: '10.1.0.11:9092', clientInstanceId: 'PyUE4E-JQdOaDAMF6CwzAQ', startSeen: true, requests: 4, gaps: 0, input: 1 });
    const findings = doc.findings as Record<string, unknown>[];
    expect(findings.find((f) => f.rule === 'client-id-after-first')).toEqual({
      rule: 'client-id-after-first',
      severity: 'error',
      message: 'ClientId "payments-api" sent on a request other than the first of the connection',
      frame: 42,
      time: '2025-12-01T00:00:00.004100Z',
      client: '10.2.0.24:43001',
      broker: '10.1.0.12:9092',
      apiKey: 3,
      apiName: 'Metadata',
      apiVersion: 12,
      correlationId: 2,
      clientInstanceId: Buffer.from(MIX_IDS.payments).toString('base64url'),
      input: 1,
      show: `kcid show ${MIX} 42`,
    });
    expect(findings.map((f) => f.rule)).toEqual([
      'telemetry-payload-invalid',
      'telemetry-push-too-soon',
      'telemetry-payload-invalid',
      'telemetry-push-too-soon',
      'client-id-after-first',
      'client-id-after-first',
      'telemetry-zero-id-with-header',
      'broker-accepted-invalid',
      'broker-assigned-instance-id',
      'telemetry-id-mismatch',
      'telemetry-payload-invalid',
      'telemetry-push-without-subscription',
      'member-id-mismatch',
      'instance-id-multiple-client-ids',
      'instance-id-multiple-hosts',
      'zero-client-instance-id',
      'telemetry-v1-without-instance-id',
      'client-instance-id-changed',
      'client-instance-id-missing',
      'malformed-request-header',
      'tls-on-kafka-port',
      'capture-gap',
    ]);
  });

  it('gives byte-identical JSON on every run', async () => {
    const a = await kcid(['analyze', MIX, '--format', 'json']);
    const b = await kcid(['analyze', MIX, '--format', 'json']);
    expect(a.stdout).toBe(b.stdout);
  });

  it('reads gzip whatever the file is called, and stdin as -', async () => {
    const plain = await kcid(['analyze', MIX, '--format', 'json']);
    const gz = tmpFile('capture.pcap', gzipSync(readFileSync(MIX)));
    const fromGzip = await kcid(['analyze', gz, '--format', 'json']);
    const strip = (s: string) => {
      const d = JSON.parse(s) as { inputs: unknown[]; findings: { show?: unknown }[] };
      d.inputs = [];
      // The show command line names the file (none for standard input).
      for (const f of d.findings) delete f.show;
      return d;
    };
    expect(strip(fromGzip.stdout)).toEqual(strip(plain.stdout));
    expect((JSON.parse(fromGzip.stdout) as { inputs: { format: string }[] }).inputs[0]!.format).toBe('pcapng+gzip');
    const stdin = spawnKcid(['analyze', '-', '--format', 'json'], readFileSync(MIX));
    expect(stdin.code).toBe(1);
    expect(strip(stdin.stdout)).toEqual(strip(plain.stdout));
    expect((JSON.parse(stdin.stdout) as { inputs: { file: string }[] }).inputs[0]!.file).toBe('-');
  });

  it('reads stdin redirected from a file, and a pipe that is non-blocking and slow (EAGAIN, then more)', async (ctx) => {
    const plain = JSON.parse((await kcid(['analyze', MIX, '--format', 'json'])).stdout) as { inputs: { file: string }[]; findings: { show: string | null }[] };
    plain.inputs[0]!.file = '-';
    for (const f of plain.findings) f.show = null; // no show command line for standard input
    const expected = JSON.stringify(plain, null, 2) + '\n';
    const redirected = spawnSync('sh', ['-c', `exec "${process.execPath}" bin/kcid analyze - --format json < ${MIX}`], { env: { ...process.env, NO_COLOR: '1' } });
    expect(redirected.stdout.toString()).toBe(expected);
    // Python sets O_NONBLOCK on the pipe kcid inherits; the capture arrives in two parts a second
    // apart, so kcid (started by then) finds the pipe empty.
    if (spawnSync('python3', ['--version']).status !== 0) return ctx.skip('python3 is not on the PATH: the non-blocking pipe half did not run (.ci/run installs it)');
    const bytes = readFileSync(MIX);
    const nonBlocking = 'import fcntl, os, sys; fcntl.fcntl(0, fcntl.F_SETFL, fcntl.fcntl(0, fcntl.F_GETFL) | os.O_NONBLOCK); os.execv(sys.argv[1], sys.argv[1:])';
    const child = spawn('python3', ['-c', nonBlocking, process.execPath, 'bin/kcid', 'analyze', '-', '--format', 'json'], { env: { ...process.env, NO_COLOR: '1' } });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const closed = new Promise((resolve) => child.on('close', resolve));
    child.stdin.on('error', () => {}); // kcid gone early: the assertions below say so
    child.stdin.write(bytes.subarray(0, 1000));
    await new Promise((resolve) => setTimeout(resolve, 1000));
    child.stdin.end(bytes.subarray(1000));
    expect(await closed).toBe(1);
    expect(out).toBe(expected);
  });

  it('analyses a capture cut off mid-packet up to there and says so', async () => {
    const bytes = readFileSync(MIX);
    const cut = tmpFile('cut.pcapng', bytes.subarray(0, bytes.length - 50));
    const r = await kcid(['analyze', cut, '--format', 'json']);
    expect(r.code).toBe(1);
    const doc = JSON.parse(r.stdout) as { findings: { rule: string; frame: number }[]; inputs: { packets: number }[] };
    expect(doc.inputs[0]!.packets).toBe(115);
    expect(doc.findings.at(-1)).toMatchObject({ rule: 'capture-truncated', frame: 116 });
  });

  it('prints the table: summary line, instances, findings; colour only on a TTY without NO_COLOR', async () => {
    const r = await kcid(['analyze', MIX]);
    expect(r.stdout.split('\n')[0]).toBe(
      '1 capture, 116 packets, 11 Kafka connections (port 9092), 27 requests, 9 client instances: 15 errors, 5 warnings, 2 notes',
    );
    expect(r.stdout).not.toMatch(/\x1b\[/);
    expect((await kcid(['analyze', MIX], { tty: true, env: { NO_COLOR: '1' } })).stdout).not.toMatch(/\x1b\[/);
    expect((await kcid(['analyze', MIX], { tty: true, env: {} })).stdout).toMatch(/\x1b\[31m\x1b\[1merror/);
  });

  const GO_SNIFFER = '../shared/captures/public/40t__go-sniffer/kafka.pcap';
  it('counts notes on the captures apart from info findings, so "0 notes" is never followed by a note', skipUnless(HAVE_SHARED, NO_SHARED), async () => {
    const lines = (await kcid(['analyze', GO_SNIFFER])).stdout.split('\n');
    expect(lines.slice(0, 2)).toEqual([
      '1 capture, 20 packets, 2 Kafka connections (port 9092), 2 requests, 1 client instance: 0 errors, 0 warnings, 1 note; 1 capture note',
      `capture note: ${GO_SNIFFER}: 20 records have a captured length larger than their original length (a writer bug; e.g. some Linux cooked captures write incl_len = orig_len + 16): their original length is taken to be the captured length`,
    ]);
  });

  it('--color, --no-color and FORCE_COLOR as chalk honours them; NO_COLOR as before', async () => {
    const colored = (r: { stdout: string }) => /\x1b\[31m\x1b\[1merror/.test(r.stdout);
    // Into a pipe: no colour, unless asked.
    expect(colored(await kcid(['analyze', MIX]))).toBe(false);
    expect(colored(await kcid(['analyze', MIX, '--color']))).toBe(true);
    expect(colored(await kcid(['--color', 'analyze', MIX]))).toBe(true);
    expect(colored(await kcid(['analyze', MIX], { env: { FORCE_COLOR: '1' } }))).toBe(true);
    expect(colored(await kcid(['analyze', MIX], { env: { FORCE_COLOR: '' } }))).toBe(true);
    // On a terminal: colour, unless told otherwise.
    expect(colored(await kcid(['analyze', MIX], { tty: true }))).toBe(true);
    expect(colored(await kcid(['analyze', MIX, '--no-color'], { tty: true }))).toBe(false);
    expect(colored(await kcid(['analyze', MIX], { tty: true, env: { FORCE_COLOR: '0' } }))).toBe(false);
    expect(colored(await kcid(['analyze', MIX], { tty: true, env: { FORCE_COLOR: 'false' } }))).toBe(false);
    expect(colored(await kcid(['analyze', MIX], { tty: true, env: { NO_COLOR: '1', FORCE_COLOR: '1' } }))).toBe(false);
    // The flag wins over the environment.
    expect(colored(await kcid(['analyze', MIX, '--color'], { env: { NO_COLOR: '1' } }))).toBe(true);
    expect(colored(await kcid(['analyze', MIX, '--no-color'], { tty: true, env: { FORCE_COLOR: '3' } }))).toBe(false);
    // --output FILE: only with --color.
    const file = join(tmpDir(), 'report.txt');
    await kcid(['analyze', MIX, '--output', file], { env: { FORCE_COLOR: '1' } });
    expect(readFileSync(file, 'utf8')).not.toMatch(/\x1b\[/);
    await kcid(['analyze', MIX, '--output', file, '--color']);
    expect(readFileSync(file, 'utf8')).toMatch(/\x1b\[31m\x1b\[1merror/);
  });

  it('on a narrow terminal the instances table drops its least needed columns and says which, findings become a list', async () => {
    const instancesTable = (out: string) => out.slice(out.indexOf('Client instances\n') + 17, out.indexOf('\n\nFindings'));
    const narrow = instancesTable((await kcid(['analyze', MIX], { tty: true, columns: 100, env: { NO_COLOR: '1' } })).stdout).split('\n');
    expect(narrow[1]).toBe('│ Client instance ID     │ ClientId           │ Hosts     │ Brokers        │ Conns │ Requests │');
    expect(Math.max(...narrow.map((l) => l.length))).toBeLessThanOrEqual(100);
    expect(narrow.at(-1)).toBe('(100 columns: Source, Last seen, First seen, Software not shown; --format json has all)');
    // Findings: too narrow for a readable message column, so a list, the message wrapped under each.
    const out = (await kcid(['analyze', MIX], { tty: true, columns: 100, env: { NO_COLOR: '1' } })).stdout;
    expect(out.slice(out.indexOf('\nFindings\n') + 10).split('\n').slice(0, 8)).toEqual([
      // The head line wraps at a space too, never past the width.
      'error    telemetry-payload-invalid  frame 17  10.2.0.21:40001 -> 10.1.0.11:9092  PushTelemetry v1',
      '    corr 4',
      '    Metrics (180 bytes, zstd) do not decode: zstd: not a zstd frame (starts with 28 28 28 28); the',
      '    broker answered NONE (0)',
      'warning  telemetry-push-too-soon  frame 17  10.2.0.21:40001 -> 10.1.0.11:9092  PushTelemetry v1 corr',
      '    4',
      '    PushTelemetry 0.8 ms after the subscription was answered (frame 9); PushIntervalMs is 30000 (the',
      '    first push may come from half of it); the broker answered NONE (0)',
    ]);
    const clientId = out.indexOf('error    client-id-after-first  frame 42');
    expect(out.slice(clientId).split('\n').slice(0, 5)).toEqual([
      'error    client-id-after-first  frame 42  10.2.0.24:43001 -> 10.1.0.12:9092  Metadata v12 corr 2',
      '    ClientId "payments-api" sent on a request other than the first of the connection',
      'error    client-id-after-first  frame 44  10.2.0.24:43001 -> 10.1.0.12:9092',
      '    GetTelemetrySubscriptions v0 corr 3',
      '    ClientId "payments-api" sent on a request other than the first of the connection',
    ]);
    expect(Math.max(...out.split('\n').map((l) => l.length))).toBeLessThanOrEqual(100);
    const wide = instancesTable((await kcid(['analyze', MIX], { tty: true, columns: 200, env: { NO_COLOR: '1' } })).stdout).split('\n');
    expect(wide[1]).toMatch(/^│ Client instance ID +│ Source +│ ClientId .*│ First seen +│ Last seen +│$/);
    expect(wide.at(-1)).toMatch(/^└/);
  });

  it('kcid clients on a narrow terminal drops its least needed columns too, and says which', async () => {
    const narrow = (await kcid(['clients', MIX], { tty: true, columns: 100, env: { NO_COLOR: '1' } })).stdout.trimEnd().split('\n');
    expect(narrow[1]).toBe('│ Client instance ID     │ ClientId           │ Hosts     │ Requests │ p99 ms │ Findings   │');
    expect(Math.max(...narrow.map((l) => l.length))).toBeLessThanOrEqual(100);
    expect(narrow.at(-1)).toBe('(100 columns: Brokers, Software, Conns, p50 ms, Errors not shown; --format json has all)');
    const wide = (await kcid(['clients', MIX], { tty: true, columns: 200, env: { NO_COLOR: '1' } })).stdout.trimEnd().split('\n');
    expect(wide[1]).toMatch(/^│ Client instance ID +│ ClientId +│ Software +│ Hosts +│ Brokers +│ Conns +│ Requests +│ Errors +│ p50 ms +│ p99 ms +│ Findings +│$/);
    expect(wide.at(-1)).toMatch(/^└/);
  });

  it('--max-connections bounds the live connections: the least recently active is retired', async () => {
    const doc = async (o: string[]) => JSON.parse((await kcid(['analyze', MIX, '--format', 'json', '--fail-on', 'none', ...o])).stdout) as { summary: { connections: number; requests: number } };
    expect((await doc([])).summary).toMatchObject({ connections: 11, requests: 27 });
    // With room for 2, a connection retired while idle comes back as a new one (without its start).
    expect((await doc(['--max-connections', '2'])).summary).toMatchObject({ connections: 12, requests: 27 });
  });

  it('merges several captures into one report', async () => {
    const r = await kcid(['analyze', KCAT, MIX, '--format', 'json']);
    const doc = JSON.parse(r.stdout) as { inputs: { file: string }[]; summary: { connections: number } };
    expect(doc.inputs.map((i) => i.file)).toEqual([KCAT, MIX]);
    expect(doc.summary.connections).toBe(14);
  });
});

describe('kcid requests', () => {
  it('writes one JSON line per request, in capture order, with the answering frame', async () => {
    const r = await kcid(['requests', MIX, '--format', 'ndjson']);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toHaveLength(27);
    expect(lines[0]).toEqual({
      frame: 4,
      time: '2025-12-01T00:00:00.000300Z',
      client: '10.2.0.21:40001',
      broker: '10.1.0.11:9092',
      apiKey: 18,
      apiName: 'ApiVersions',
      apiVersion: 4,
      headerVersion: 2,
      correlationId: 1,
      clientId: 'orders-service',
      clientInstanceId: 'PyUE4E-JQdOaDAMF6CwzAQ',
      headerClientInstanceId: 'PyUE4E-JQdOaDAMF6CwzAQ',
      otherTags: [],
      responseFrame: 5,
      errorCode: 0,
      errorName: 'NONE (0)',
      latencyMs: 0.1,
      input: 1,
      requestCaptured: true,
    });
    expect(lines.map((l) => l.frame)).toEqual([...lines.map((l) => l.frame as number)].sort((a, b) => a - b));
  });

  it('prints a readable table by default', async () => {
    const r = await kcid(['requests', KCAT]);
    const rows = r.stdout.trimEnd().split('\n');
    expect(rows[0]).toMatch(/^ {2}Frame {2}Time {22}Client -> Broker/);
    expect(rows[1]).toMatch(/^ {6}\d  20\d\d-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z  /);
    expect(rows).toHaveLength(14);
    expect(rows.at(-1)).toBe('12 requests');
  });
});

describe('kcid rules', () => {
  it('lists every rule with its severity and explains one', async () => {
    const list = await kcid(['rules']);
    expect(list.stdout.trimEnd().split('\n')).toHaveLength(RULES.length);
    expect(list.stdout).toMatch(/^zero-client-instance-id +error +both +A request header carries the zero UUID/);
    const one = await kcid(['rules', 'member-id-mismatch']);
    expect(one.stdout).toContain('member-id-mismatch (warning)');
    expect(one.stdout).toContain('Spec: KIP-1313: "the client SHOULD use the same UUID');
  });

  it('fits the terminal: at 80 columns each summary wraps under its column, at a word boundary', async () => {
    const at80 = (await kcid(['rules'], { tty: true, columns: 80 })).stdout;
    const lines = at80.trimEnd().split('\n');
    expect(Math.max(...lines.map((l) => l.length))).toBeLessThanOrEqual(80);
    // The id, severity and revision columns leave too little room at 80: each summary goes under its rule.
    expect(lines.slice(0, 4)).toEqual([
      'zero-client-instance-id  error  both',
      '    A request header carries the zero UUID as its ClientInstanceId (tag 0).',
      'client-instance-id-changed  error  both',
      '    On one connection, a request header ClientInstanceId differs from the one',
    ]);
    // Every word of every summary is there, in order.
    expect(at80.replace(/\s+/g, ' ')).toBe((await kcid(['rules'])).stdout.replace(/\s+/g, ' '));
    // At 240 columns every summary fits on its line: the terminal shows what a pipe gets.
    const at240 = (await kcid(['rules'], { tty: true, columns: 240 })).stdout;
    expect(at240).toBe((await kcid(['rules'])).stdout);
    // Too narrow for a summary column: the summary goes under its rule.
    expect((await kcid(['rules'], { tty: true, columns: 60 })).stdout.split('\n').slice(0, 3)).toEqual([
      'zero-client-instance-id  error  both',
      '    A request header carries the zero UUID as its',
      '    ClientInstanceId (tag 0).',
    ]);
    const one = (await kcid(['rules', 'member-id-mismatch'], { tty: true, columns: 80 })).stdout;
    expect(Math.max(...one.split('\n').map((l) => l.length))).toBeLessThanOrEqual(80);
    expect(one.replace(/\s+/g, ' ')).toBe((await kcid(['rules', 'member-id-mismatch'])).stdout.replace(/\s+/g, ' '));
  });

  it('--format json: id, severity, summary, explanation and spec text of every rule, or of one', async () => {
    const all = JSON.parse((await kcid(['rules', '--format', 'json'])).stdout) as Record<string, string>[];
    expect(all.map((r) => r.id)).toEqual(RULES.map((r) => r.id));
    const m = RULES.findIndex((r) => r.id === 'member-id-mismatch');
    expect(all[m]).toEqual({ id: 'member-id-mismatch', severity: 'warning', revision: 'both', summary: RULES[m]!.summary, explanation: RULES[m]!.explanation, spec: RULES[m]!.spec });
    expect(JSON.parse((await kcid(['rules', 'member-id-mismatch', '--format', 'json'])).stdout)).toEqual(all[m]);
    expect(await kcid(['rules', 'nope', '--format', 'json'])).toMatchObject({ code: 2, stdout: '', stderr: "kcid: unknown rule 'nope' (see 'kcid rules' for the list)\n" });
  });
});

describe('the real process', () => {
  it('exits with the code run() returns and prints no stack on bad input', () => {
    const r = spawnKcid(['analyze', 'fixtures/README.md']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^kcid: fixtures\/README\.md: not a pcap or pcapng file/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('a closed pipe is not an error: kcid itself exits 0, silently', () => {
    // 20,000 rows, megabytes of output: far more than a pipe holds, so kcid is still writing when head leaves.
    const big = tmpFile('many-requests.pcap', floodCapture(20_000, 'request'));
    const r = spawnSync('bash', ['-c', `node bin/kcid requests ${big} --format ndjson | head -c 10 > /dev/null; echo "kcid exit \${PIPESTATUS[0]}"`], {
      encoding: 'utf8',
    });
    expect(r.stdout).toBe('kcid exit 0\n');
    expect(r.stderr).toBe('');
  });

  it('into a pipe, output waits for a slow reader and arrives whole', () => {
    const big = tmpFile('many-requests.pcap', floodCapture(20_000, 'request'));
    const r = spawnSync('bash', ['-c', `node bin/kcid requests ${big} --format ndjson | (sleep 0.5; wc -l); echo "kcid exit \${PIPESTATUS[0]}"`], {
      encoding: 'utf8',
    });
    expect(r.stdout.trim().split(/\s+/)).toEqual(['20000', 'kcid', 'exit', '0']);
    expect(r.stderr).toBe('');
  });
});

describe('never silent on TCP kcid did not recognise (issue 27)', () => {
  /** A connection on port 7000 (SYN seen) whose client's first bytes are HTTP: not Kafka. */
  function httpOnly(): string {
    const s = new Scenario();
    const c = s.connect({ client: '10.9.0.1:40000', broker: '10.9.0.2:7000' });
    c.clientBytes(Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
    c.serverBytes(Buffer.from('HTTP/1.1 204 No Content\r\n\r\n'));
    c.close();
    return s.file('cli-not-kafka.pcap');
  }
  const NOTE = '1 TCP connection not recognised as Kafka: port 7000 (1 connection, 54 bytes); if a port carries Kafka, list it with --port (for example --port 7000)';

  it('no Kafka at all exits 2 with one line, in every format, unless --allow-empty', async () => {
    const file = httpOnly();
    for (const format of ['table', 'json', 'ndjson', 'sarif', 'junit', 'markdown']) {
      const r = await kcid(['analyze', file, '--format', format]);
      // Before: exit 0 and "No findings".
      expect([r.code, r.stdout, r.stderr]).toEqual([2, '', 'kcid: no Kafka found in the input (see its capture notes; give --port if Kafka runs on other ports, or --allow-empty if that is expected)\n']);
    }
    const ok = await kcid(['analyze', file, '--format', 'json', '--allow-empty']);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout).inputs[0].notes).toEqual([NOTE]);
    const table = await kcid(['analyze', file, '--allow-empty']);
    expect(table.stdout).toContain(`capture note: ${file}: ${NOTE}`);
  });
});
