/**
 * `kcid export` and `--format parquet`, read back by DuckDB (@duckdb/node-api): the SQL answers
 * over an export must equal kcid's own JSON report of the same captures (counts per instance and
 * API, error counts, the cross-connection rules written in SQL over `connections`), for every
 * fixture and, when ../shared is present, every public capture.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useDuckDb } from './duckdb.js';
import { removeTmpFiles, tmpDir, tmpFile } from './builder/capture.js';
import { requestFrame } from './builder/kafka.js';
import { Scenario } from './builder/scenario.js';
import { CONTENT, Tls13Session } from './builder/tls.js';
import { responseTo } from './tls/record.js';
import { runKcid as kcid, NO_SHARED, skipUnless } from './helpers.js';
import { HAVE_SHARED, PUBLIC_CAPTURES } from './real/captures.js';
import { ParquetTableWriter, ROW_GROUP_ROWS, type Table } from '../src/export/parquet.js';
import { captureName, escapePartition } from '../src/export/names.js';
import { splitEndpoint } from '../src/export/tables.js';

const FIXTURES = readdirSync('fixtures')
  .filter((f) => /\.(pcap|pcapng)(\.gz)?$/.test(f))
  .sort()
  .map((f) => `fixtures/${f}`);
const PUBLIC_DIR = '../shared/captures/public';
// By name, so that without ../shared its tests are listed as skipped.
const PUBLIC = PUBLIC_CAPTURES.map((n) => join(PUBLIC_DIR, n.slice('public/'.length)));
const MIX = 'fixtures/kip1313-mix.pcapng';
const ZERO_ID = 'AAAAAAAAAAAAAAAAAAAAAA';

const rows = useDuckDb();

afterAll(() => removeTmpFiles());

interface JsonReport {
  instances: { clientInstanceId: string | null; connections: number; requests: number; apis: Record<string, number> }[];
  connections: { client: string; broker: string; requests: number }[];
  findings: { rule: string; clientInstanceId: string | null; frame: number | null; input: number; message: string }[];
}

/** The report an export's tables equal: analyze --telemetry, since an export decodes the telemetry (its findings include the KIP-714 rules'). */
async function jsonReport(files: string[]): Promise<JsonReport> {
  const r = await kcid(['analyze', ...files, '--telemetry', '--format', 'json', '--fail-on', 'none', '--jobs', '1']);
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout) as JsonReport;
}

async function exportTo(files: string[], extra: string[] = []): Promise<string> {
  const dir = join(tmpDir(), 'lake');
  const r = await kcid(['export', ...files, '--to', dir, ...extra]);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return dir;
}

const table = (dir: string, name: string) => `read_parquet('${dir}/${name}/*/*.parquet', hive_partitioning = true)`;

const queried = (file: string): void => {
  let dir: string;
  let report: JsonReport;
  beforeAll(async () => {
    dir = await exportTo([file]);
    report = await jsonReport([file]);
  });

  it('has the four tables under capture=NAME', () => {
    for (const t of ['requests', 'connections', 'instances', 'findings']) {
      expect(readdirSync(join(dir, t))).toEqual([`capture=${escapePartition(captureName(file))}`]);
      expect(readdirSync(join(dir, t, `capture=${escapePartition(captureName(file))}`))).toEqual(['part-0.parquet']);
    }
  });

  it('requests per instance and API equal the JSON instances', async () => {
    // Requests join their connection (the same 4-tuple, within its lifetime) to find its instance.
    const got = await rows(`
      select i.instance, i.client_instance_id, i.connections, i.requests,
             coalesce((select list(x order by x) from (select r.api_name || '=' || count(*) as x
                from ${table(dir, 'requests')} r join ${table(dir, 'connections')} c
                  on r.client_ip = c.client_ip and r.client_port = c.client_port and r.broker_ip = c.broker_ip and r.broker_port = c.broker_port
                 and r.time between c.first_seen and c.last_seen
               where c.instance = i.instance group by r.api_name)), []::varchar[]) as apis
        from ${table(dir, 'instances')} i order by i.instance`);
    expect(got).toEqual(
      report.instances.map((x, k) => ({
        instance: k,
        client_instance_id: x.clientInstanceId,
        connections: x.connections,
        requests: String(x.requests),
        apis: Object.entries(x.apis)
          .map(([name, n]) => `${name}=${n}`)
          .sort(),
      })),
    );
  });

  it('request and error counts agree between requests, connections and the clients report', async () => {
    const clients = JSON.parse((await kcid(['clients', file, '--format', 'json', '--jobs', '1'])).stdout) as { clientInstanceId: string | null; errorResponses: number }[];
    const [r] = await rows(`select count(*) as n, count(*) filter (where error_code <> 0) as errors from ${table(dir, 'requests')}`);
    const [c] = await rows(`select sum(requests) as n, sum(error_responses) as errors from ${table(dir, 'connections')}`);
    const totalRequests = report.connections.reduce((n, x) => n + x.requests, 0);
    const totalErrors = clients.reduce((n, x) => n + x.errorResponses, 0);
    expect(r).toEqual({ n: String(totalRequests), errors: String(totalErrors) });
    expect(c).toEqual({ n: totalRequests === 0 ? null : String(totalRequests), errors: totalRequests === 0 ? null : String(totalErrors) });
    const perInstance = await rows(`select error_responses from ${table(dir, 'instances')} order by instance`);
    expect(perInstance.map((x) => Number(x.error_responses))).toEqual(clients.map((x) => x.errorResponses));
  });

  it('the findings table holds the JSON findings', async () => {
    const got = await rows(`select rule, frame, message, client_instance_id from ${table(dir, 'findings')}`);
    expect(got).toEqual(report.findings.map((f) => ({ rule: f.rule, frame: f.frame === null ? null : String(f.frame), message: f.message, client_instance_id: f.clientInstanceId })));
  });
};
describe.each(FIXTURES)('export of %s, queried by DuckDB', queried);
describe.each(PUBLIC)('export of %s, queried by DuckDB', skipUnless(HAVE_SHARED, NO_SHARED), queried);

/** The cross-connection rules as SQL over `connections` (the README shows the same queries). */
const MULTIPLE_HOSTS = (conns: string) => `
  select client_instance_id, count(distinct client_ip) as hosts
    from ${conns}
   where requests > 0 and client_instance_id is not null and client_instance_id <> '${ZERO_ID}'
   group by client_instance_id having count(distinct client_ip) > 1 order by client_instance_id`;
const MULTIPLE_CLIENT_IDS = (conns: string) => `
  select client_instance_id, count(distinct id) as client_ids
    from (select client_instance_id, unnest(client_ids) as id from ${conns}
           where requests > 0 and client_instance_id is not null and client_instance_id <> '${ZERO_ID}')
   group by client_instance_id having count(distinct id) > 1 order by client_instance_id`;

describe('cross-connection rules in SQL', () => {
  it('equal kcid analyze on the same captures, one capture and all fixtures together', async () => {
    for (const files of [[MIX], FIXTURES]) {
      const dir = await exportTo(files);
      const report = await jsonReport(files);
      const ids = (rule: string) => [...new Set(report.findings.filter((f) => f.rule === rule).map((f) => f.clientInstanceId))].sort();
      expect((await rows(MULTIPLE_HOSTS(table(dir, 'connections')))).map((r) => r.client_instance_id)).toEqual(ids('instance-id-multiple-hosts'));
      expect((await rows(MULTIPLE_CLIENT_IDS(table(dir, 'connections')))).map((r) => r.client_instance_id)).toEqual(ids('instance-id-multiple-client-ids'));
    }
  });

  it('on the bundled capture: DZ6PemtcTT6PGis8TV5vcA from 2 hosts with 2 ClientIds', async () => {
    const dir = await exportTo([MIX]);
    expect(await rows(MULTIPLE_HOSTS(table(dir, 'connections')))).toEqual([{ client_instance_id: 'DZ6PemtcTT6PGis8TV5vcA', hosts: '2' }]);
    expect(await rows(MULTIPLE_CLIENT_IDS(table(dir, 'connections')))).toEqual([{ client_instance_id: 'DZ6PemtcTT6PGis8TV5vcA', client_ids: '2' }]);
  });

  it('an instance seen from a second host in another capture is found across the partitions', async () => {
    // The same capture under two names stands for two brokers' captures: no new host, no finding;
    // the mix's own multi-host instance is still found once.
    const dir = await exportTo([MIX]);
    await kcid(['export', MIX, '--to', dir, '--name', 'kip1313-mix-again']);
    expect(readdirSync(join(dir, 'connections')).sort()).toEqual(['capture=kip1313-mix', 'capture=kip1313-mix-again']);
    expect((await rows(MULTIPLE_HOSTS(table(dir, 'connections')))).map((r) => r.client_instance_id)).toEqual(['DZ6PemtcTT6PGis8TV5vcA']);
  });
});

describe('types', () => {
  it('the schema of each table, as DuckDB reads it', async () => {
    const dir = await exportTo([MIX]);
    const schema = async (t: string) => (await rows(`describe select * from ${table(dir, t)}`)).map((r) => `${String(r.column_name)} ${String(r.column_type)}`);
    expect(await schema('requests')).toEqual([
      'input_file VARCHAR',
      'input INTEGER',
      'frame BIGINT',
      'time TIMESTAMP WITH TIME ZONE',
      'client_ip VARCHAR',
      'client_port INTEGER',
      'broker_ip VARCHAR',
      'broker_port INTEGER',
      'api_key SMALLINT',
      'api_name VARCHAR',
      'api_version SMALLINT',
      'header_version SMALLINT',
      'correlation_id INTEGER',
      'client_id VARCHAR',
      'client_instance_id VARCHAR',
      'client_instance_uuid BLOB',
      'header_client_instance_id VARCHAR',
      'other_tags STRUCT(tag INTEGER, size INTEGER)[]',
      'response_frame BIGINT',
      'error_code SMALLINT',
      'error_name VARCHAR',
      'latency_ms DOUBLE',
      'capture VARCHAR',
    ]);
    // In the layout the capture is the path's (Spark refuses a column in both); a single file carries it.
    expect((await rows(`select name from parquet_schema('${dir}/requests/capture=kip1313-mix/part-0.parquet') where name = 'capture'`)).length).toBe(0);
    expect(await schema('connections')).toContain('client_ids VARCHAR[]');
    expect(await schema('instances')).toContain('first_seen TIMESTAMP WITH TIME ZONE');
    expect(await schema('findings')).toContain('client_instance_uuid BLOB');
  });

  it('timestamps are UTC microseconds; the UUID and its base64 text are one ID; errors have names', async () => {
    const dir = await exportTo([MIX]);
    const [r] = await rows(`
      select strftime(time at time zone 'UTC', '%Y-%m-%dT%H:%M:%S.%fZ') as time, client_instance_id, lower(hex(client_instance_uuid)) as uuid,
             error_code, error_name, other_tags
        from ${table(dir, 'requests')} where frame = 44`);
    const nd = (await kcid(['requests', MIX, '--format', 'ndjson'])).stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { frame: number; time: string; clientInstanceId: string | null })
      .find((x) => x.frame === 44)!;
    expect(r).toEqual({
      time: nd.time,
      client_instance_id: 'xaHnsh0_Toqca38uDUqLkQ',
      uuid: 'c5a1e7b21d3f4e8a9c6b7f2e0d4a8b91',
      error_code: 0,
      error_name: 'NONE',
      other_tags: [],
    });
    // Kafka's base64 is the 16 bytes of the UUID column.
    expect(Buffer.from(String(r!.uuid), 'hex').toString('base64url')).toBe('xaHnsh0_Toqca38uDUqLkQ');
  });
});

describe('--format parquet', () => {
  it('kcid requests --format parquet -o FILE holds the ndjson rows', async () => {
    const files = [MIX, 'fixtures/kcat-mock-produce.pcap'];
    const out = join(tmpDir(), 'requests.parquet');
    expect(await kcid(['requests', ...files, '--format', 'parquet', '-o', out])).toEqual({ code: 0, stdout: '', stderr: '' });
    const nd = (await kcid(['requests', ...files, '--format', 'ndjson'])).stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const got = await rows(`
      select frame::integer as frame, strftime(time at time zone 'UTC', '%Y-%m-%dT%H:%M:%S.%fZ') as time,
             case when client_ip like '%:%' then '[' || client_ip || ']' else client_ip end || ':' || client_port as client,
             case when broker_ip like '%:%' then '[' || broker_ip || ']' else broker_ip end || ':' || broker_port as broker,
             api_key as apiKey, api_name as apiName, api_version as apiVersion, header_version as headerVersion,
             correlation_id as correlationId, client_id as clientId, client_instance_id as clientInstanceId, header_client_instance_id as headerClientInstanceId, other_tags as otherTags,
             response_frame::integer as responseFrame, error_code as errorCode, latency_ms as latencyMs, input, capture, input_file
        from '${out}'`);
    // NDJSON counts inputs from 1 (as the tables) and names error codes; the Parquet table keeps 0-based inputs and codes only.
    const asParquet = nd.map(({ errorName: _errorName, requestCaptured: _requestCaptured, ...row }) => ({ ...row, input: (row.input as number) - 1 }));
    expect(got).toEqual(asParquet.map((row) => ({ ...row, capture: captureName(files[row.input]!), input_file: files[row.input] })));
  });

  it('kcid analyze --format parquet -o FILE holds the findings, at the severities of the run', async () => {
    const out = join(tmpDir(), 'findings.parquet');
    const r = await kcid(['analyze', MIX, '--format', 'parquet', '-o', out, '--rule', 'capture-gap=off']);
    expect(r).toEqual({ code: 1, stdout: '', stderr: '' });
    const report = JSON.parse((await kcid(['analyze', MIX, '--format', 'json', '--rule', 'capture-gap=off'])).stdout) as { findings: { rule: string; severity: string; frame: number }[] };
    expect(await rows(`select rule, severity, frame::integer as frame from '${out}'`)).toEqual(report.findings.map((f) => ({ rule: f.rule, severity: f.severity, frame: f.frame })));
    expect(report.findings.length).toBe(21);
  });

  it.each([
    [['requests', MIX, '--format', 'parquet'], 'kcid: --format parquet writes a file: give it with -o FILE\n'],
    [['analyze', MIX, '--format', 'parquet'], 'kcid: --format parquet writes a file: give it with -o FILE\n'],
    [['requests', '-', '--format', 'parquet', '-o', '/tmp/x.parquet', '--follow'], 'kcid: --follow writes table or ndjson, not parquet\n'],
    [['export', MIX, '--to', '/tmp/x', '--jobs', '2'], 'kcid: kcid export reads its captures one after another: --jobs does not apply (run several exports at once instead)\n'],
    [['export', MIX], "kcid: required option '--to <dir>' not specified\n"],
  ])('%j is one line, exit 2', async (args, message) => {
    expect(await kcid(args)).toEqual({ code: 2, stdout: '', stderr: message });
  });
});

describe('kcid export: the layout and bad --to', () => {
  it('prints what it wrote per capture', async () => {
    const dir = join(tmpDir(), 'lake');
    expect(await kcid(['export', MIX, '--to', dir])).toEqual({
      code: 0,
      stdout: `${MIX}: capture=kip1313-mix: 27 requests, 11 connections, 9 instances, 22 findings, 3 telemetry pushes\n`,
      stderr: '',
    });
  });

  it('a capture exported before is an error unless --overwrite', async () => {
    const dir = await exportTo([MIX]);
    expect(await kcid(['export', MIX, '--to', dir])).toEqual({
      code: 2,
      stdout: '',
      stderr: `kcid: ${dir}/requests/capture=kip1313-mix exists: that capture was exported before (--overwrite replaces it)\n`,
    });
    expect((await kcid(['export', MIX, '--to', dir, '--overwrite'])).code).toBe(0);
    expect(readdirSync(join(dir, 'requests', 'capture=kip1313-mix'))).toEqual(['part-0.parquet']);
  });

  it('a --to that is a file, or under a file, is one line and exit 2', async () => {
    const base = tmpDir();
    const file = join(base, 'f');
    writeFileSync(file, 'x');
    expect(await kcid(['export', MIX, '--to', file])).toEqual({ code: 2, stdout: '', stderr: `kcid: --to ${file}: is a file, not a folder\n` });
    expect(await kcid(['export', MIX, '--to', join(file, 'sub')])).toEqual({ code: 2, stdout: '', stderr: `kcid: --to ${file}/sub: a part of the path is a file\n` });
  });

  it('a --to where no folder can be made is one line and exit 2 (no endless mkdir under /proc)', async () => {
    expect(await kcid(['export', MIX, '--to', '/proc/kcid-lake/x'])).toEqual({ code: 2, stdout: '', stderr: 'kcid: --to /proc/kcid-lake/x: no folder can be made there\n' });
  });

  it('a --to that is not writable is one line and exit 2', skipUnless(process.getuid?.() !== 0, 'running as root, which writes anywhere: no folder is unwritable'), async () => {
    const dir = join(tmpDir(), 'ro');
    mkdirSync(dir, { mode: 0o555 });
    expect(await kcid(['export', MIX, '--to', dir])).toEqual({ code: 2, stdout: '', stderr: `kcid: --to ${dir}: not writable\n` });
  });

  it('two inputs with one name are refused before anything is written', async () => {
    const a = join(tmpDir(), 'x.pcapng');
    writeFileSync(a, readFileSync(MIX));
    const dir = join(tmpDir(), 'lake');
    expect(await kcid(['export', MIX, a.replace('x.pcapng', 'x.pcapng'), '--to', dir, '--name', 'n'])).toEqual({ code: 2, stdout: '', stderr: 'kcid: --name names one capture (give one input)\n' });
    const b = join(tmpDir(), 'kip1313-mix.pcapng');
    writeFileSync(b, readFileSync(MIX));
    expect(await kcid(['export', MIX, b, '--to', dir])).toEqual({
      code: 2,
      stdout: '',
      stderr: `kcid: ${MIX} and ${b} would both be capture=kip1313-mix (rename one, or export it alone with --name)\n`,
    });
    expect(existsSync(dir)).toBe(false);
  });

  it('a bad capture leaves nothing of itself, and the captures before it whole', async () => {
    const bad = join(tmpDir(), 'bad.pcap');
    writeFileSync(bad, 'not a capture at all');
    const dir = join(tmpDir(), 'lake');
    const r = await kcid(['export', MIX, bad, '--to', dir]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`kcid: ${bad}: not a pcap or pcapng file (starts with 6e 6f 74 20)\n`);
    expect(readdirSync(join(dir, 'requests'))).toEqual(['capture=kip1313-mix']);
    expect(readdirSync(join(dir, 'findings'))).toEqual(['capture=kip1313-mix']);
  });

  it('reads standard input as capture=stdin, or --name', () => {
    const dir = join(tmpDir(), 'lake');
    const run = (args: string[]) => spawnSync(process.execPath, ['bin/kcid', 'export', '-', '--to', dir, ...args], { input: readFileSync(MIX) });
    const r = run([]);
    expect([r.status, r.stdout.toString(), r.stderr.toString()]).toEqual([0, '-: capture=stdin: 27 requests, 11 connections, 9 instances, 22 findings, 3 telemetry pushes\n', '']);
    expect(run(['--name', 'broker-1-2026-12-01']).status).toBe(0);
    expect(readdirSync(join(dir, 'requests')).sort()).toEqual(['capture=broker-1-2026-12-01', 'capture=stdin']);
  });

  it('a TLS capture with its key log (--tls-keylog): the decrypted requests; without it, none', async () => {
    // TLS 1.3 made up byte by byte (test/builder/tls.ts): two requests and their responses.
    const tls = new Tls13Session();
    const s = new Scenario();
    const conn = s.connect({ client: '10.9.0.1:50001', broker: '10.9.0.2:9092' });
    conn.clientBytes(tls.clientFirst());
    conn.serverBytes(tls.serverFlight());
    conn.clientBytes(tls.clientFinished());
    for (const corr of [1, 2]) {
      const frame = Buffer.from(requestFrame({ apiKey: 18, apiVersion: 3, correlationId: corr, clientId: 'tls-app', body: Buffer.from('0a6b6369642d7465737405302e312e3000', 'hex') }));
      conn.clientBytes(tls.client.seal(CONTENT.APPLICATION_DATA, frame));
      conn.serverBytes(tls.server.seal(CONTENT.APPLICATION_DATA, responseTo(frame)));
    }
    conn.close();
    const capture = s.file('tls.pcap');
    const keys = tmpFile('tls.keys', tls.keylog);
    const dir = await exportTo([capture], ['--tls-keylog', keys]);
    expect(await rows(`select api_name, correlation_id, client_id, error_name from ${table(dir, 'requests')} order by frame`)).toEqual([
      { api_name: 'ApiVersions', correlation_id: 1, client_id: 'tls-app', error_name: 'NONE' },
      { api_name: 'ApiVersions', correlation_id: 2, client_id: 'tls-app', error_name: 'NONE' },
    ]);
    expect(await rows(`select client_ip, broker_port, requests, responses from ${table(dir, 'connections')}`)).toEqual([{ client_ip: '10.9.0.1', broker_port: 9092, requests: '2', responses: '2' }]);
    const blind = await exportTo([capture]);
    expect(await rows(`select count(*) as n from ${table(blind, 'requests')}`)).toEqual([{ n: '0' }]);
  });

  it('the same capture gives the same bytes', async () => {
    const [a, b] = [await exportTo([MIX]), await exportTo([MIX])];
    for (const t of ['requests', 'connections', 'instances', 'findings']) {
      const file = (d: string) => readFileSync(join(d, t, 'capture=kip1313-mix', 'part-0.parquet'));
      expect(file(a).equals(file(b))).toBe(true);
    }
  });

  it('capture names: extensions off, stdin for -, Hive escapes in the path', () => {
    expect(['a/b/broker-1.pcap.gz', 'x.pcapng', '-', 'c.cap', '.pcap', 'plain'].map(captureName)).toEqual(['broker-1', 'x', 'stdin', 'c', '.pcap', 'plain']);
    expect(escapePartition('day=1/a:b%c')).toBe('day%3D1%2Fa%3Ab%25c');
    expect(splitEndpoint('[2001:db8::1]:9092')).toEqual(['2001:db8::1', 9092]);
    expect(splitEndpoint('10.0.0.1:40001')).toEqual(['10.0.0.1', 40001]);
  });
});

describe('row groups', () => {
  it('are written as they fill: a table of 2.5 groups has 3, and all its rows', async () => {
    const t: Table<number> = {
      name: 't',
      columns: [
        { name: 'n', type: 'int64', nullable: false, get: (n) => n },
        { name: 's', type: 'string', nullable: true, get: (n) => (n % 3 === 0 ? null : `row ${n}`) },
      ],
    };
    const path = join(tmpDir(), 't.parquet');
    const w = new ParquetTableWriter(t, path);
    const total = ROW_GROUP_ROWS * 2 + ROW_GROUP_ROWS / 2;
    for (let n = 0; n < total; n++) w.add(n);
    expect(w.written).toBe(ROW_GROUP_ROWS * 2); // two full groups are on disk before close
    w.close();
    expect(await rows(`select count(*) as groups from parquet_metadata('${path}') where path_in_schema = 'n'`)).toEqual([{ groups: '3' }]);
    expect(await rows(`select count(*) as n, sum(n) as total, count(s) as strings, max(s) filter (where n = 7) as seven from '${path}'`)).toEqual([
      { n: String(total), total: String((total * (total - 1)) / 2), strings: String(total - Math.ceil(total / 3)), seven: 'row 7' },
    ]);
  });
});
