#!/usr/bin/env node
/**
 * How the Parquet writers kcid could use compare (README, "Parquet export"): the request rows of
 * a capture, as `kcid requests --format ndjson` writes them, written as Parquet with one library,
 * in row groups of 65,536; the time is the writing only (rows already parsed), the size the file's.
 *
 *   node scripts/bench/generate.mjs chatty /tmp/chatty.pcap
 *   bin/kcid requests /tmp/chatty.pcap --format ndjson > /tmp/chatty.ndjson
 *   npm install --no-save parquet-wasm@0.8.0 apache-arrow@21.2.0     # the candidate kcid does not use
 *   node scripts/bench/parquet-writers.mjs (hyparquet|parquetwasm) (SNAPPY|ZSTD) /tmp/chatty.ndjson OUT.parquet
 *
 * Run the candidates interleaved (a round of each, three rounds) on a shared machine.
 */
import { readFileSync, openSync, writeSync, closeSync, statSync } from 'node:fs';
const [which, codec = 'SNAPPY', input, out] = process.argv.slice(2);
if (!['hyparquet', 'parquetwasm'].includes(which) || input === undefined || out === undefined) {
  process.stderr.write('usage: parquet-writers.mjs (hyparquet|parquetwasm) (SNAPPY|ZSTD) ROWS.ndjson OUT.parquet\n');
  process.exit(2);
}
const rows = readFileSync(input, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
const GROUP = 65536;
const b64 = (s) => s === null ? null : new Uint8Array(Buffer.from(s, 'base64url'));
function split(a) { const i = a.lastIndexOf(':'); return [a.slice(0, i), Number(a.slice(i + 1))]; }
function columns(chunk) {
  const n = chunk.length;
  const c = { frame: [], time: [], client_ip: [], client_port: new Int32Array(n), broker_ip: [], broker_port: new Int32Array(n), api_key: new Int32Array(n), api_name: [], api_version: new Int32Array(n), header_version: [], correlation_id: new Int32Array(n), client_id: [], uuid: [], uuid_b64: [], response_frame: [], error_code: [], latency_ms: [] };
  chunk.forEach((r, i) => {
    c.frame.push(r.frame); c.time.push(Date.parse(r.time) * 1000 + Number(r.time.slice(23, 26)));
    const [ci, cp] = split(r.client); c.client_ip.push(ci); c.client_port[i] = cp;
    const [bi, bp] = split(r.broker); c.broker_ip.push(bi); c.broker_port[i] = bp;
    c.api_key[i] = r.apiKey; c.api_name.push(r.apiName); c.api_version[i] = r.apiVersion; c.header_version.push(r.headerVersion);
    c.correlation_id[i] = r.correlationId; c.client_id.push(r.clientId); c.uuid.push(b64(r.clientInstanceId)); c.uuid_b64.push(r.clientInstanceId);
    c.response_frame.push(r.responseFrame); c.error_code.push(r.errorCode); c.latency_ms.push(r.latencyMs);
  });
  return c;
}
const t0 = performance.now();
if (which === 'hyparquet') {
  const { ParquetWriter, fileWriter } = await import('hyparquet-writer');
  const int = (name, bits, opt) => ({ name, type: 'INT32', logical_type: { type: 'INTEGER', bitWidth: bits, isSigned: true }, repetition_type: opt ? 'OPTIONAL' : 'REQUIRED' });
  const str = (name, opt) => ({ name, type: 'BYTE_ARRAY', converted_type: 'UTF8', logical_type: { type: 'STRING' }, repetition_type: opt ? 'OPTIONAL' : 'REQUIRED' });
  const schema = [{ name: 'root', num_children: 17 },
    { name: 'frame', type: 'INT64', repetition_type: 'REQUIRED' },
    { name: 'time', type: 'INT64', logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MICROS' }, repetition_type: 'REQUIRED' },
    str('client_ip'), int('client_port', 32), str('broker_ip'), int('broker_port', 32), int('api_key', 16), str('api_name'), int('api_version', 16), int('header_version', 16, true),
    int('correlation_id', 32), str('client_id', true),
    { name: 'uuid', type: 'FIXED_LEN_BYTE_ARRAY', type_length: 16, logical_type: { type: 'UUID' }, repetition_type: 'OPTIONAL' },
    str('uuid_b64', true), { name: 'response_frame', type: 'INT64', repetition_type: 'OPTIONAL' }, int('error_code', 16, true), { name: 'latency_ms', type: 'DOUBLE', repetition_type: 'OPTIONAL' }];
  const compressors = {};
  if (codec === 'ZSTD') throw new Error('hyparquet-writer has Snappy built in; Node 20 has no zstd to give it');
  const w = new ParquetWriter({ writer: fileWriter(out), schema, codec, compressors });
  for (let i = 0; i < rows.length; i += GROUP) {
    const c = columns(rows.slice(i, i + GROUP));
    const big = (a) => a.map((v) => v === null ? null : BigInt(v));
    w.write({ rowGroupSize: GROUP, columnData: [
      { name: 'frame', data: big(c.frame) }, { name: 'time', data: big(c.time) }, { name: 'client_ip', data: c.client_ip }, { name: 'client_port', data: c.client_port },
      { name: 'broker_ip', data: c.broker_ip }, { name: 'broker_port', data: c.broker_port }, { name: 'api_key', data: c.api_key }, { name: 'api_name', data: c.api_name },
      { name: 'api_version', data: c.api_version }, { name: 'header_version', data: c.header_version }, { name: 'correlation_id', data: c.correlation_id }, { name: 'client_id', data: c.client_id },
      { name: 'uuid', data: c.uuid }, { name: 'uuid_b64', data: c.uuid_b64 }, { name: 'response_frame', data: big(c.response_frame) }, { name: 'error_code', data: c.error_code }, { name: 'latency_ms', data: c.latency_ms },
    ] });
  }
  w.finish();
} else {
  const A = await import('apache-arrow');
  const pw = await import('parquet-wasm');
  const props = new pw.WriterPropertiesBuilder().setCompression(codec === 'ZSTD' ? pw.Compression.ZSTD : pw.Compression.SNAPPY).setMaxRowGroupSize(GROUP).build();
  const fd = openSync(out, 'w');
  let i = 0;
  const src = new ReadableStream({ pull(ctl) {
    if (i >= rows.length) { ctl.close(); return; }
    const c = columns(rows.slice(i, i + GROUP)); i += GROUP;
    const t = A.tableFromArrays({
      frame: A.vectorFromArray(c.frame.map(BigInt), new A.Int64()), time: A.makeVector(A.makeData({ type: new A.TimestampMicrosecond('UTC'), data: BigInt64Array.from(c.time.map(BigInt)), length: c.time.length })),
      client_ip: A.vectorFromArray(c.client_ip, new A.Utf8()), client_port: c.client_port, broker_ip: A.vectorFromArray(c.broker_ip, new A.Utf8()), broker_port: c.broker_port,
      api_key: Int16Array.from(c.api_key), api_name: A.vectorFromArray(c.api_name, new A.Utf8()), api_version: Int16Array.from(c.api_version),
      header_version: A.vectorFromArray(c.header_version, new A.Int16()), correlation_id: c.correlation_id, client_id: A.vectorFromArray(c.client_id, new A.Utf8()),
      uuid: A.vectorFromArray(c.uuid, new A.FixedSizeBinary(16)), uuid_b64: A.vectorFromArray(c.uuid_b64, new A.Utf8()),
      response_frame: A.vectorFromArray(c.response_frame.map((v) => v === null ? null : BigInt(v)), new A.Int64()), error_code: A.vectorFromArray(c.error_code, new A.Int16()), latency_ms: A.vectorFromArray(c.latency_ms, new A.Float64()),
    });
    const wt = pw.Table.fromIPCStream(A.tableToIPC(t, 'stream'));
    for (const b of wt.recordBatches()) ctl.enqueue(b);
  } });
  const bytes = await pw.transformParquetStream(src, props);
  for await (const chunk of bytes) writeSync(fd, chunk);
  closeSync(fd);
}
const secs = (performance.now() - t0) / 1000;
process.stdout.write(`${which} ${codec}: ${rows.length} rows in ${secs.toFixed(2)} s (${(rows.length / secs / 1000).toFixed(0)} k rows/s), ${(statSync(out).size / 1e6).toFixed(1)} MB, rss ${(process.memoryUsage().rss / 1e6).toFixed(0)} MB\n`);
