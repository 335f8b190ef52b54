/**
 * The export's `telemetry` and `telemetry_metrics` tables, read back by DuckDB: the SQL answers
 * must equal `kcid telemetry --format json` of the same capture, on the recorded librdkafka
 * capture (fixtures/ckjs-mock-telemetry.pcap), the bundled capture (pushes that do not decode)
 * and captures built byte by byte (errors, no answer, a push too large to decode, gzip).
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useDuckDb } from './duckdb.js';
import { removeTmpFiles, tmpDir } from './builder/capture.js';
import { Scenario } from './builder/scenario.js';
import { ID_A_B64, runKcid as kcid } from './helpers.js';
import { compress, encodeMetrics, sampleMetrics } from './telemetry/otlp.js';
import { TelemetryClient } from './telemetry/client.js';

const TELEMETRY_FIXTURE = 'fixtures/ckjs-mock-telemetry.pcap';
const MIX = 'fixtures/kip1313-mix.pcapng';

const rows = useDuckDb();

afterAll(() => removeTmpFiles());

const table = (dir: string, name: string) => `read_parquet('${dir}/${name}/*/*.parquet', hive_partitioning = true)`;

async function exportTo(files: string[], extra: string[] = [], dir = join(tmpDir(), 'lake')): Promise<string> {
  const r = await kcid(['export', ...files, '--to', dir, ...extra]);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return dir;
}

interface PushJson {
  input: number;
  frame: number;
  responseFrame: number | null;
  time: string;
  client: string;
  broker: string;
  apiVersion: number;
  subscriptionId: number;
  terminating: boolean;
  compression: string;
  compressedBytes: number | null;
  decompressedBytes: number | null;
  metrics: number | null;
  points: number | null;
  intervalMs: number | null;
  errorCode: number | null;
  metricList?: { name: string; type: string; temporality: string | null; monotonic: boolean | null; points: number; attributes: string[] }[];
  payloadError?: string;
}

interface TelemetryJson {
  instances: {
    clientInstanceId: string | null;
    clientAddress: string;
    clientId: string | null;
    pushes: PushJson[];
    metrics: { name: string; type: string; temporality: string | null; pushes: number; points: number }[];
  }[];
}

async function telemetryJson(files: string[], extra: string[] = []): Promise<TelemetryJson> {
  const r = await kcid(['telemetry', ...files, '--format', 'json', '--jobs', '1', ...extra]);
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout) as TelemetryJson;
}

/** The pushes of the JSON, one per row as the telemetry table holds them (capture order). */
function pushRows(t: TelemetryJson) {
  return t.instances
    .flatMap((c) =>
      c.pushes.map((p) => ({
        // JSON counts inputs from 1; the tables keep 0-based inputs (as the requests table does).
        input: p.input - 1,
        frame: String(p.frame),
        time: p.time,
        client: p.client,
        broker: p.broker,
        client_id: c.clientId,
        client_instance_id: c.clientInstanceId,
        api_version: p.apiVersion,
        subscription_id: p.subscriptionId,
        terminating: p.terminating,
        codec: p.compression,
        compressed_bytes: p.compressedBytes,
        decompressed_bytes: p.decompressedBytes,
        metrics: p.metrics,
        points: p.points === null ? null : String(p.points),
        interval_ms: p.intervalMs,
        response_frame: p.responseFrame === null ? null : String(p.responseFrame),
        error_code: p.errorCode,
        decode_problem: p.payloadError ?? null,
      })),
    )
    .sort((a, b) => a.input - b.input || Number(a.frame) - Number(b.frame));
}

/** The telemetry table as pushRows shows the JSON (addresses joined back, times as kcid prints them). */
const PUSHES_SQL = (dir: string) => `
  select input, frame, strftime(time at time zone 'UTC', '%Y-%m-%dT%H:%M:%S.%fZ') as time,
         client_ip || ':' || client_port as client, broker_ip || ':' || broker_port as broker,
         client_id, client_instance_id, api_version, subscription_id, terminating, codec,
         compressed_bytes, decompressed_bytes, metrics, points, interval_ms, response_frame, error_code, decode_problem
    from ${table(dir, 'telemetry')} order by input, frame`;

/** Each conversation's metrics rolled up as `kcid telemetry` does: metrics joined to their push for its host and ClientId. */
const ROLLUP_SQL = (dir: string) => `
  select t.client_instance_id, t.client_ip, t.client_id, m.name, m.type, m.temporality,
         count(distinct m.frame) as pushes, sum(m.points) as points
    from ${table(dir, 'telemetry_metrics')} m
    join ${table(dir, 'telemetry')} t using (capture, input, frame)
   group by all order by t.client_instance_id, t.client_ip, t.client_id, m.name`;

function rollupRows(t: TelemetryJson) {
  return t.instances
    .flatMap((c) =>
      c.metrics.map((m) => ({
        client_instance_id: c.clientInstanceId,
        client_ip: c.clientAddress,
        client_id: c.clientId,
        name: m.name,
        type: m.type,
        temporality: m.temporality,
        pushes: String(m.pushes),
        points: String(m.points),
      })),
    )
    .sort((a, b) => cmp(a.client_instance_id ?? '', b.client_instance_id ?? '') || cmp(a.client_ip, b.client_ip) || cmp(a.client_id ?? '', b.client_id ?? '') || cmp(a.name, b.name));
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

describe('the telemetry tables of a real librdkafka capture', () => {
  let dir: string;
  let json: TelemetryJson;
  beforeAll(async () => {
    dir = await exportTo([TELEMETRY_FIXTURE]);
    json = await telemetryJson([TELEMETRY_FIXTURE]);
  });

  it('one row per push, equal to kcid telemetry --format json', async () => {
    const got = await rows(PUSHES_SQL(dir));
    expect(got.length).toBe(6);
    expect(got).toEqual(pushRows(json));
    expect(got.map((r) => [r.frame, r.client_id, r.codec, r.compressed_bytes, r.decompressed_bytes, r.metrics, r.interval_ms, r.terminating])).toEqual([
      ['138', 'kcid-modern-consumer', 'zstd', 775, 2978, 19, null, false],
      ['147', 'kcid-modern-producer', 'zstd', 538, 2041, 14, null, false],
      ['156', 'kcid-modern-consumer', 'zstd', 738, 2978, 19, 1001.761, false],
      ['165', 'kcid-modern-producer', 'zstd', 499, 2041, 14, 1000.723, false],
      ['184', 'kcid-modern-consumer', 'zstd', 759, 2978, 19, 675.496, true],
      ['198', 'kcid-modern-producer', 'zstd', 503, 2041, 14, 563.924, true],
    ]);
  });

  it('one row per metric per push, equal to each push metricList and to the rollup of each conversation', async () => {
    const got = await rows(`select input, frame, name, type, temporality, monotonic, points, attributes from ${table(dir, 'telemetry_metrics')}`);
    const want = json.instances
      .flatMap((c) => c.pushes.flatMap((p) => (p.metricList ?? []).map((m) => ({ input: p.input - 1, frame: String(p.frame), name: m.name, type: m.type, temporality: m.temporality, monotonic: m.monotonic, points: String(m.points), attributes: m.attributes }))))
      .sort((a, b) => a.input - b.input || Number(a.frame) - Number(b.frame));
    expect(got).toEqual(want);
    expect(got.length).toBe(3 * 19 + 3 * 14);
    expect(await rows(ROLLUP_SQL(dir))).toEqual(rollupRows(json));
  });

  it('the UUID column is the base64 ID; types as DuckDB reads them', async () => {
    const [r] = await rows(`select distinct client_instance_id, lower(hex(client_instance_uuid)) as uuid from ${table(dir, 'telemetry')}`);
    expect(r).toEqual({ client_instance_id: 'AAAAAAAAASoAAAAAAAAAgQ', uuid: '000000000000012a0000000000000081' });
    const schema = async (t: string) => (await rows(`describe select * from ${table(dir, t)}`)).map((x) => `${String(x.column_name)} ${String(x.column_type)}`);
    expect(await schema('telemetry')).toEqual([
      'input_file VARCHAR',
      'input INTEGER',
      'frame BIGINT',
      'time TIMESTAMP WITH TIME ZONE',
      'connection INTEGER',
      'client_ip VARCHAR',
      'client_port INTEGER',
      'broker_ip VARCHAR',
      'broker_port INTEGER',
      'client_id VARCHAR',
      'client_instance_id VARCHAR',
      'client_instance_uuid BLOB',
      'api_version SMALLINT',
      'correlation_id INTEGER',
      'subscription_id INTEGER',
      'terminating BOOLEAN',
      'codec VARCHAR',
      'compressed_bytes INTEGER',
      'decompressed_bytes INTEGER',
      'metrics INTEGER',
      'points BIGINT',
      'interval_ms DOUBLE',
      'response_frame BIGINT',
      'error_code SMALLINT',
      'error_name VARCHAR',
      'decode_problem VARCHAR',
      'capture VARCHAR',
    ]);
    expect(await schema('telemetry_metrics')).toEqual([
      'input_file VARCHAR',
      'input INTEGER',
      'frame BIGINT',
      'time TIMESTAMP WITH TIME ZONE',
      'client_instance_id VARCHAR',
      'client_instance_uuid BLOB',
      'name VARCHAR',
      'type VARCHAR',
      'temporality VARCHAR',
      'monotonic BOOLEAN',
      'points BIGINT',
      'attributes VARCHAR[]',
      'start_time TIMESTAMP WITH TIME ZONE',
      'end_time TIMESTAMP WITH TIME ZONE',
      'capture VARCHAR',
    ]);
  });

  it("the README's query: metrics pushed per instance per hour", async () => {
    expect(
      await rows(`
        select client_instance_id, date_trunc('hour', time) as hour, count(*) as pushes, sum(metrics) as metrics, sum(points) as points,
               sum(compressed_bytes) as bytes_sent, count(*) filter (where decode_problem is not null) as not_decoded
          from ${table(dir, 'telemetry')} group by all order by hour, client_instance_id`),
    ).toEqual([{ client_instance_id: 'AAAAAAAAASoAAAAAAAAAgQ', hour: '2026-12-01 02:00:00+00', pushes: '6', metrics: '99', points: '99', bytes_sent: '3812', not_decoded: '0' }]);
  });

  it('the findings table holds the telemetry rules as kcid analyze --telemetry finds them', async () => {
    const report = JSON.parse((await kcid(['analyze', TELEMETRY_FIXTURE, '--telemetry', '--format', 'json', '--fail-on', 'none'])).stdout) as { findings: { rule: string; frame: number | null }[] };
    expect(await rows(`select rule, frame::integer as frame from ${table(dir, 'findings')}`)).toEqual(report.findings.map((f) => ({ rule: f.rule, frame: f.frame })));
  });

  it('filters apply to the pushes as to the requests', async () => {
    const filtered = await exportTo([TELEMETRY_FIXTURE], ['--client-id', 'kcid-modern-producer']);
    expect((await rows(`select frame::integer as frame from ${table(filtered, 'telemetry')} order by frame`)).map((r) => r.frame)).toEqual([147, 165, 198]);
    expect(await rows(`select count(distinct frame) as pushes from ${table(filtered, 'telemetry_metrics')}`)).toEqual([{ pushes: '3' }]);
  });
});

describe('pushes that do not decode', () => {
  it('the bundled capture: three pushes, each with its decode problem, and no metrics', async () => {
    const dir = await exportTo([MIX]);
    const got = await rows(PUSHES_SQL(dir));
    expect(got).toEqual(pushRows(await telemetryJson([MIX])));
    expect(got.map((r) => [r.frame, r.codec, r.compressed_bytes, r.metrics, r.decode_problem])).toEqual([
      ['17', 'zstd', 180, null, 'zstd: not a zstd frame (starts with 28 28 28 28)'],
      ['35', 'lz4', 96, null, 'not an LZ4 frame (starts with 11 11 11 11)'],
      ['51', 'none', 64, null, 'OTLP MetricsData does not parse: index out of range: 38 + 34 > 64'],
    ]);
    expect(await rows(`select count(*) as n from ${table(dir, 'telemetry_metrics')}`)).toEqual([{ n: '0' }]);
  });
});

describe('built captures', () => {
  it('errors by name, an unanswered push, a push above --max-telemetry-bytes, gzip: as kcid telemetry says', async () => {
    const metrics = encodeMetrics(sampleMetrics());
    const gz = await compress(1, metrics);
    const s = new Scenario();
    const p = new TelemetryClient(s);
    p.subscribe({ acceptedCompressionTypes: [1], requestedMetrics: [''] });
    s.wait(1);
    await p.push({ blob: gz, compressionType: 1 }, 0);
    s.wait(0.2);
    await p.push({ blob: gz, compressionType: 1 }, 89); // too soon: THROTTLING_QUOTA_EXCEEDED
    s.wait(1);
    await p.push({ blob: new Uint8Array(5000), compressionType: 0 }, 0); // frame above the bound: not kept, not decoded
    s.wait(1);
    await p.push({ blob: gz, compressionType: 1, terminating: true }, null); // the capture has no answer
    const file = s.file();
    const dir = await exportTo([file], ['--max-telemetry-bytes', '4096']);
    const json = await telemetryJson([file], ['--max-telemetry-bytes', '4096']);
    const got = await rows(PUSHES_SQL(dir));
    expect(got).toEqual(pushRows(json));
    expect(
      (await rows(`select frame::integer as frame, client_instance_id, codec, error_code, error_name, decompressed_bytes is not null as decoded, decode_problem, terminating, response_frame from ${table(dir, 'telemetry')} order by frame`)),
    ).toEqual([
      { frame: 6, client_instance_id: ID_A_B64, codec: 'gzip', error_code: 0, error_name: 'NONE', decoded: true, decode_problem: null, terminating: false, response_frame: '7' },
      { frame: 8, client_instance_id: ID_A_B64, codec: 'gzip', error_code: 89, error_name: 'THROTTLING_QUOTA_EXCEEDED', decoded: true, decode_problem: null, terminating: false, response_frame: '9' },
      {
        // 5,038 bytes: frames 10-13, the request is its last.
        frame: 13,
        client_instance_id: ID_A_B64,
        codec: 'none',
        error_code: 0,
        error_name: 'NONE',
        decoded: false,
        decode_problem: json.instances[0]!.pushes[2]!.payloadError,
        terminating: false,
        response_frame: '14',
      },
      { frame: 15, client_instance_id: ID_A_B64, codec: 'gzip', error_code: null, error_name: null, decoded: true, decode_problem: null, terminating: true, response_frame: null },
    ]);
    expect(json.instances[0]!.pushes[2]!.payloadError).toMatch(/^metrics not decoded: the frame \(\d+ bytes\) is larger than --max-telemetry-bytes \(4096 bytes\)$/);
    expect(await rows(`select frame::integer as frame, count(*) as n from ${table(dir, 'telemetry_metrics')} group by frame order by frame`)).toEqual([
      { frame: 6, n: '4' },
      { frame: 8, n: '4' },
      { frame: 15, n: '4' },
    ]);
    expect(await rows(`select name, type, temporality, monotonic, points, attributes from ${table(dir, 'telemetry_metrics')} where frame = 6`)).toEqual([
      { name: 'org.apache.kafka.producer.record.send.total', type: 'sum', temporality: 'delta', monotonic: true, points: '1', attributes: ['client.id'] },
      { name: 'org.apache.kafka.producer.node.request.latency.avg', type: 'gauge', temporality: null, monotonic: null, points: '2', attributes: ['node.id'] },
      { name: 'org.apache.kafka.producer.request.size', type: 'histogram', temporality: 'delta', monotonic: null, points: '1', attributes: [] },
      { name: 'org.apache.kafka.producer.batch.size', type: 'exponentialHistogram', temporality: 'delta', monotonic: null, points: '1', attributes: ['topic'] },
    ]);
    expect(await rows(ROLLUP_SQL(dir))).toEqual(rollupRows(json));
  });
});

describe('a capture without telemetry', () => {
  it('has no telemetry folders; re-exported over one that had, its old telemetry goes', async () => {
    const dir = await exportTo(['fixtures/kcat-mock-produce.pcap']);
    expect(readdirSync(dir).sort()).toEqual(['connections', 'findings', 'instances', 'requests']);
    // The same partition name, first with pushes, then --overwrite with none.
    const again = await exportTo([TELEMETRY_FIXTURE], ['--name', 'x']);
    expect(readdirSync(join(again, 'telemetry'))).toEqual(['capture=x']);
    expect(await kcid(['export', TELEMETRY_FIXTURE, '--to', again, '--name', 'x'])).toEqual({
      code: 2,
      stdout: '',
      stderr: `kcid: ${again}/requests/capture=x exists: that capture was exported before (--overwrite replaces it)\n`,
    });
    await exportTo(['fixtures/kcat-mock-produce.pcap'], ['--name', 'x', '--overwrite'], again);
    expect(existsSync(join(again, 'telemetry', 'capture=x'))).toBe(false);
    expect(existsSync(join(again, 'telemetry_metrics', 'capture=x'))).toBe(false);
    expect(readdirSync(join(again, 'requests', 'capture=x'))).toEqual(['part-0.parquet']);
  });

  it('prints the pushes it wrote, only when there are some', async () => {
    const dir = join(tmpDir(), 'lake');
    expect(await kcid(['export', TELEMETRY_FIXTURE, 'fixtures/kcat-mock-produce.pcap', '--to', dir])).toEqual({
      code: 0,
      stdout:
        `${TELEMETRY_FIXTURE}: capture=ckjs-mock-telemetry: 60 requests, 8 connections, 3 instances, 9 findings, 6 telemetry pushes\n` +
        'fixtures/kcat-mock-produce.pcap: capture=kcat-mock-produce: 12 requests, 3 connections, 1 instances, 3 findings\n',
      stderr: '',
    });
  });
});
