/**
 * Incident debugging: live input with --follow through a real pipe, filters, and `kcid clients`.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runKcid } from './helpers.js';

const MIX = 'fixtures/kip1313-mix.pcapng';
const MIX_BYTES = readFileSync(MIX);

const kcid = (args: string[]) => runKcid(args);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Live {
  lines: string[];
  /** stdout lines seen when each chunk was written. */
  seenAt: number[];
  code: number | null;
  stderr: string;
}

/** Feeds `bytes` to `kcid args` through a pipe in `chunk`-byte pieces, `delayMs` apart. */
async function follow(args: string[], bytes: Buffer, chunk: number, delayMs: number, interruptAfter?: number): Promise<Live> {
  const child = spawn(process.execPath, ['bin/kcid', ...args], { env: { ...process.env, NO_COLOR: '1' }, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const closed = new Promise<void>((resolve) => child.on('close', () => resolve()));
  const seenAt: number[] = [];
  const end = interruptAfter ?? bytes.length;
  // Let Node start and load kcid before the capture flows (on a loaded machine that alone took 0.4-0.9 s,
  // longer than the whole feed): the tests are about output arriving while input still does.
  await sleep(1500);
  for (let at = 0; at < end; at += chunk) {
    child.stdin.write(bytes.subarray(at, Math.min(at + chunk, end)));
    await sleep(delayMs);
    seenAt.push(out.split('\n').length - 1);
  }
  if (interruptAfter === undefined) child.stdin.end();
  else {
    // Interrupt only once kcid is reading (it has printed a finding), however slow its start-up.
    for (let waited = 0; !out.includes('\n') && waited < 15_000; waited += 50) await sleep(50);
    await sleep(200);
    child.kill('SIGINT');
  }
  // On Ctrl-C the process must end by itself, with its input still open.
  const code = await exited;
  child.stdin.end();
  await closed;
  return { lines: out.trimEnd().split('\n'), seenAt, code, stderr };
}

describe('analyze - --follow', () => {
  it('prints findings while the capture is still arriving, then the summary, with the usual exit code', async () => {
    const live = await follow(['analyze', '-', '--follow'], MIX_BYTES, 1000, 40);
    expect(live.stderr).toBe('');
    expect(live.code).toBe(1);
    // Findings appeared before the input ended: the first one well before the last chunk.
    const firstSeen = live.seenAt.findIndex((n) => n > 0);
    expect(firstSeen).toBeGreaterThan(0);
    expect(firstSeen).toBeLessThan(live.seenAt.length - 3);
    // In capture order, the findings across connections too (the telemetry rules, instance-id-multiple-*):
    // each is printed when its evidence is complete, not at the end of input.
    expect(live.lines[0]).toBe(
      '2025-12-01T00:00:00.001Z  warning  telemetry-push-too-soon  frame 17  10.2.0.21:40001 -> 10.1.0.11:9092  PushTelemetry v1 corr 4  PushTelemetry 0.8 ms after the subscription was answered (frame 9); PushIntervalMs is 30000 (the first push may come from half of it); the broker answered NONE (0)',
    );
    const frames = live.lines.filter((l) => /^2025-12-01T[\d:.]+Z  (error|warning|info)  /.test(l)).map((l) => Number(/ frame (\d+) /.exec(l)![1]));
    expect(frames).toEqual([...frames].sort((a, b) => a - b));
    expect(live.lines).toContain('1 capture, 116 packets, 11 Kafka connections (port 9092), 27 requests, 9 client instances: 15 errors, 5 warnings, 2 notes');
    expect(live.lines.filter((l) => /^2025-12-01T[\d:.]+Z  (error|warning|info)  /.test(l))).toHaveLength(22);
  });

  it('with --format ndjson writes one JSON object per finding and a summary object last', async () => {
    const live = await follow(['analyze', '-', '--follow', '--format', 'ndjson'], MIX_BYTES, 4096, 10);
    const objects = live.lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(objects).toHaveLength(23);
    expect(objects[0]).toMatchObject({ rule: 'telemetry-push-too-soon', frame: 17 });
    expect(objects.at(-1)).toEqual({
      summary: { connections: 11, requests: 27, responses: 25, instances: 9, findings: { error: 15, warning: 5, info: 2 } },
    });
  });

  it('on Ctrl-C prints the summary of what it read and exits with the usual code', async () => {
    // Stop after the payments-api violations (frame 45 ends near byte 6,000).
    const live = await follow(['analyze', '-', '--follow'], MIX_BYTES, 1500, 30, 7500);
    expect(live.code).toBe(1);
    expect(live.lines[0]).toMatch(/^2025-12-01T00:00:00\.001Z {2}warning {2}telemetry-push-too-soon {2}frame 17 /);
    expect(live.lines.some((l) => / client-id-after-first {2}frame 42 /.test(l))).toBe(true);
    expect(live.lines.some((l) => /^1 capture, \d+ packets, /.test(l))).toBe(true);
  });

  it('requests - --follow prints each request as it is answered', async () => {
    const live = await follow(['requests', '-', '--follow', '--format', 'ndjson'], MIX_BYTES, 1000, 30);
    expect(live.code).toBe(0);
    expect(live.lines).toHaveLength(27);
    expect(live.seenAt.findIndex((n) => n > 0)).toBeLessThan(live.seenAt.length - 5);
  });
});

describe('filters', () => {
  const findings = async (args: string[]) => {
    const r = await kcid(['analyze', MIX, '--format', 'json', '--fail-on', 'none', ...args]);
    expect(r.stderr).toBe('');
    return JSON.parse(r.stdout) as { summary: { connections: number; instances: number }; findings: { rule: string; frame: number }[]; instances: { clientInstanceId: string | null }[] };
  };

  it('--instance takes the base64 ID, the hex ID or a unique prefix', async () => {
    for (const id of ['DZ6PemtcTT6PGis8TV5vcA', '0d9e8f7a-6b5c-4d3e-8f1a-2b3c4d5e6f70', '0d9e8f7a6b5c4d3e8f1a2b3c4d5e6f70', 'DZ6P', '0d9e8']) {
      const doc = await findings(['--instance', id]);
      expect(doc.instances.map((i) => i.clientInstanceId)).toEqual(['DZ6PemtcTT6PGis8TV5vcA']);
      expect(doc.findings.map((f) => [f.rule, f.frame])).toEqual([
        ['telemetry-id-mismatch', 51],
        ['telemetry-payload-invalid', 51],
        ['telemetry-push-without-subscription', 51],
        ['member-id-mismatch', 53],
        ['instance-id-multiple-client-ids', 57],
        ['instance-id-multiple-hosts', 57],
      ]);
    }
  });

  it('--instance that matches several or none is a usage error', async () => {
    expect(await kcid(['analyze', MIX, '--instance', 'zzzz'])).toMatchObject({ code: 2, stderr: "kcid: no client instance matches 'zzzz'\n" });
    // '0' is a prefix of two IDs in hex: 0d9e8f7a-... and the zero UUID.
    const several = await kcid(['analyze', MIX, '--instance', '0']);
    expect(several).toMatchObject({ code: 2, stderr: "kcid: '0' matches 2 client instances (DZ6PemtcTT6PGis8TV5vcA, AAAAAAAAAAAAAAAAAAAAAA): give more of the ID\n" });
  });

  it('--client-id, --client, --broker, --api, --since and --until', async () => {
    expect((await findings(['--client-id', 'payments-api'])).findings.map((f) => f.frame)).toEqual([42, 44, 44, 45, 45]);
    expect((await findings(['--client', '10.2.0.28'])).findings.map((f) => f.rule)).toEqual(['client-instance-id-changed', 'client-instance-id-missing', 'malformed-request-header']);
    const none = await kcid(['analyze', MIX, '--format', 'json', '--client', '10.2.0.28:1', '--allow-empty']);
    expect(none).toMatchObject({ code: 0, stderr: '' });
    expect((JSON.parse(none.stdout) as { findings: unknown[] }).findings).toEqual([]);
    expect((await findings(['--broker', '10.1.0.13:9092'])).summary.connections).toBe(3);
    expect((await findings(['--api', 'PushTelemetry,68'])).findings.map((f) => f.rule)).toEqual([
      'telemetry-payload-invalid',
      'telemetry-push-too-soon',
      'telemetry-payload-invalid',
      'telemetry-push-too-soon',
      'telemetry-id-mismatch',
      'telemetry-payload-invalid',
      'telemetry-push-without-subscription',
      'member-id-mismatch',
    ]);
    expect((await findings(['--since', '6ms'])).findings.map((f) => f.frame)).toEqual([62, 69, 76, 78, 80, 84, 85]);
    const early = [17, 17, 35, 35, 42, 44, 44, 45, 45];
    expect((await findings(['--until', '2025-12-01T00:00:00.004500Z'])).findings.map((f) => f.frame)).toEqual(early);
    // A day, and a time with a space, are UTC unless a zone is given (the capture is 2025-12-01 from 00:00:00.000 UTC).
    expect((await findings(['--until', '2025-12-01 00:00:00.004500'])).findings.map((f) => f.frame)).toEqual(early);
    expect((await findings(['--until', '2025-12-01 01:00:00.0045+01:00'])).findings.map((f) => f.frame)).toEqual(early);
    expect((await findings(['--since', '2025-12-01'])).findings).toHaveLength(22);
    expect(await kcid(['analyze', MIX, '--since', '2025-12-02', '--format', 'json'])).toMatchObject({ code: 2 });
    expect((await findings(['--since', '2025-11-30 23:00+0100', '--until', '2025-12-01T00:00:00.0045Z'])).findings).toHaveLength(9);
  });

  it('filters that match nothing exit 2 with the filters named, unless --allow-empty', async () => {
    const message = (filters: string) => `kcid: the filters match no Kafka connection (${filters}); give --allow-empty if that is expected\n`;
    for (const [command, extra] of [
      ['analyze', ['--format', 'json']],
      ['analyze', ['--format', 'junit', '--fail-on', 'none']],
      ['clients', []],
      ['requests', ['--format', 'ndjson']],
    ] as const) {
      const typo = await kcid([command, MIX, ...extra, '--broker', 'nothost']);
      expect(typo).toMatchObject({ code: 2, stderr: message('--broker nothost') });
      expect(await kcid([command, MIX, ...extra, '--client-id', 'nobody', '--api', 'Produce'])).toMatchObject({ code: 2, stderr: message('--client-id nobody --api Produce') });
      expect(await kcid([command, MIX, ...extra, '--broker', 'nothost', '--allow-empty'])).toMatchObject({ code: 0, stderr: '' });
    }
    // Filters that match something: the usual exit codes.
    expect((await kcid(['analyze', MIX, '--format', 'json', '--broker', '10.1.0.13'])).code).toBe(1);
    expect((await kcid(['requests', MIX, '--format', 'ndjson', '--broker', '10.1.0.13'])).code).toBe(0);
  });

  it('bad filter values are one-line usage errors', async () => {
    expect(await kcid(['analyze', MIX, '--since', '10s', '--until', '1s'])).toMatchObject({ code: 2, stderr: 'kcid: --since is after --until: the window is empty\n' });
    expect((await kcid(['analyze', MIX, '--api', 'Nope'])).stderr).toBe("kcid: unknown API 'Nope' in --api (use names such as Produce,Fetch or numeric keys)\n");
    expect((await kcid(['analyze', MIX, '--since', 'yesterday'])).stderr).toBe(
      "kcid: invalid --since 'yesterday' (expected a UTC time such as 2026-12-01, 2026-12-01 02:00:00 or 2026-12-01T02:00:00Z, or an offset from the capture start such as 90s or 5m)\n",
    );
    expect(await kcid(['analyze', MIX, '--broker', '10.1.0.11:99999'])).toMatchObject({
      code: 2,
      stderr: "kcid: invalid --broker '10.1.0.11:99999' (expected HOST or HOST:PORT, IPv6 as [addr]:port)\n",
    });
  });

  it('filter request rows too', async () => {
    const r = await kcid(['requests', MIX, '--format', 'ndjson', '--instance', 'PyUE4E', '--api', 'Produce']);
    const rows = r.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as { frame: number; apiName: string });
    expect(rows.map((x) => [x.frame, x.apiName])).toEqual([
      [15, 'Produce'],
      [85, 'Produce'],
    ]);
    const byClientId = await kcid(['requests', MIX, '--format', 'ndjson', '--client-id', 'orders-service']);
    expect(byClientId.stdout.trimEnd().split('\n')).toHaveLength(7);
  });
});

describe('kcid clients', () => {
  it('one row per instance with error responses, latency percentiles and findings', async () => {
    const r = await kcid(['clients', MIX, '--format', 'json']);
    const rows = JSON.parse(r.stdout) as Record<string, unknown>[];
    expect(rows).toHaveLength(9);
    expect(rows[0]).toEqual({
      clientInstanceId: 'PyUE4E-JQdOaDAMF6CwzAQ',
      clientInstanceIdHex: '3f2504e0-4f89-41d3-9a0c-0305e82c3301',
      source: 'header',
      clientIds: ['orders-service'],
      software: [{ name: 'apache-kafka-java', version: '4.3.0' }],
      clientAddresses: ['10.2.0.21'],
      brokers: ['10.1.0.11:9092', '10.1.0.12:9092'],
      connections: 2,
      requests: 7,
      errorResponses: 0,
      errors: 0,
      // Every answer took 100 µs, and every latency was kept: exact percentiles.
      latencyP50Ms: 0.1,
      latencyP99Ms: 0.1,
      latencyExact: true,
      // Its push's Metrics are not zstd (telemetry-payload-invalid), sent at once after subscribing (telemetry-push-too-soon).
      findings: { error: 1, warning: 1, info: 1 },
    });
    expect(rows[3]).toMatchObject({ clientIds: ['payments-api'], findings: { error: 5, warning: 0, info: 0 } });
  });

  it('--instance shows one instance: connections, findings and a timeline across brokers', async () => {
    const r = await kcid(['clients', MIX, '--instance', 'PyUE']);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[0]).toBe('Client instance PyUE4E-JQdOaDAMF6CwzAQ (3f2504e0-4f89-41d3-9a0c-0305e82c3301), source: header');
    expect(r.stdout).toContain('info  capture-gap  frame 85  1319 bytes from the client are missing from the capture');
    const timeline = r.stdout.slice(r.stdout.indexOf('Timeline'));
    expect(timeline.match(/ApiVersions v4|Metadata v12|Produce v9|GetTelemetrySubscriptions v1|PushTelemetry v1/g)).toEqual([
      'ApiVersions v4',
      'Metadata v12',
      'GetTelemetrySubscriptions v1',
      'ApiVersions v4',
      'Produce v9',
      'PushTelemetry v1',
      'Produce v9',
    ]);
  });
});
