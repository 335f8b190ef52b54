#!/usr/bin/env node
/**
 * Micro-benchmark of the schema interpreter (src/kafka/schema/interpreter.ts) on the frames the analysis
 * decodes most: a request header v2 with tag 0, a ConsumerGroupHeartbeat's leading fields, a Produce
 * request's Acks, a Metadata response's error codes. Each case sets the selective decode kcid analyze
 * runs against a full decode of the same bytes (what `kcid requests --bodies` runs), so the figures
 * show what a field selection and the error-code tap save. Not a test: figures depend on the machine
 * and its load.
 *
 *   node scripts/bench/schema-micro.mjs
 *
 * The TypeScript is bundled in memory by esbuild (as scripts/gen-protocol.mjs does). Each case runs
 * interleaved (A, B, A, B, ...) in rounds and prints the median ns per decode of each side.
 */
import { build } from 'esbuild';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const entry = `
export * as headers from './src/kafka/headers.ts';
export * as interp from './src/kafka/schema/interpreter.ts';
export * as registry from './src/kafka/schema/registry.ts';
export * as scan from './src/kafka/schema/scan.ts';
`;
const out = await build({ stdin: { contents: entry, resolveDir: root, loader: 'ts' }, bundle: true, write: false, format: 'esm', platform: 'node', logLevel: 'warning' });
const { headers, interp, registry, scan } = await import(`data:text/javascript;base64,${Buffer.from(out.outputFiles[0].text).toString('base64')}`);

let t = performance.now();
const s = registry.builtinSchemas();
console.log(`builtinSchemas() first call: ${(performance.now() - t).toFixed(1)} ms`);

const bytes = (...parts) => Uint8Array.from(parts.flat(Infinity));
const str16 = (x) => [x.length >> 8, x.length & 255, ...Buffer.from(x)];
const cstr = (x) => [x.length + 1, ...Buffer.from(x)];
const i32 = (n) => [(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
const uuid = Array.from({ length: 16 }, (_, i) => i + 1);

// Metadata v12 request header v2: ClientId "orders-service", tag 0 ClientInstanceId.
const header = bytes([0, 3, 0, 12], i32(7), str16('orders-service'), [1, 0, 16], uuid);
// ConsumerGroupHeartbeat v0 request: GroupId, MemberId (22 chars), MemberEpoch, InstanceId null, RackId null, RebalanceTimeoutMs, then the rest.
const cgh = bytes(cstr('inventory'), cstr('Tq3nWZ0bR1ubfIX6i9-Dfw'), i32(5), [0], [0], i32(300000), [0], [0], [0], [0], [0], [0]);
// Produce v11 request: 10 partitions of 1000-byte records.
const parts = [];
for (let p = 0; p < 10; p++) parts.push(i32(p), [0xe9, 0x07], new Array(1000).fill(0), [0]);
const produce = bytes([0], [0xff, 0xff], i32(30000), [2], cstr('orders'), [11], parts.flat(), [0], [0]);

function time(fn, n) {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) fn();
  return Number(process.hrtime.bigint() - t0) / n;
}

function compare(name, aLabel, a, bLabel, b, n = 200000) {
  const ra = [];
  const rb = [];
  for (let round = 0; round < 15; round++) {
    ra.push(time(a, n));
    rb.push(time(b, n));
  }
  const med = (xs) => xs.sort((x, y) => x - y)[xs.length >> 1];
  console.log(`${name.padEnd(44)} ${aLabel.padStart(14)} ${med(ra).toFixed(0).padStart(5)} ns   ${bLabel.padStart(12)} ${med(rb).toFixed(0).padStart(5)} ns`);
}

// Metadata v12 response: 3 brokers, one topic of 12 partitions (3 replicas each), every ErrorCode 0 but one.
const broker = (id) => [i32(id), cstr(`broker-${id}.kafka.internal`), i32(9092), [0], [0]];
const partition = (p) => [[0, p === 7 ? 6 : 0], i32(p), i32(p % 3), i32(5), [4], i32(0), i32(1), i32(2), [4], i32(0), i32(1), i32(2), [1], [0]];
const topicId = Array.from({ length: 16 }, (_, i) => 255 - i);
const metadata = bytes(i32(0), [4], broker(0), broker(1), broker(2), cstr('cluster-0'), i32(0), [2], [0, 0], cstr('orders'), topicId, [0], [13],
  Array.from({ length: 12 }, (_, p) => partition(p)).flat(), i32(-2147483648), [0], [0]);

const H = interp.compileDecoder(s.requestHeader, 2);
compare('request header v2 (ClientId, tag 0)', 'headers.ts', () => headers.decodeRequestHeader(header, 0, header.length, true), 'interpreter', () => interp.runDecoder(H, header, 0, header.length));
const sel = ['GroupId', 'MemberId', 'MemberEpoch', 'InstanceId', 'RackId', 'RebalanceTimeoutMs'];
const C = interp.compileDecoder(s.apis.get(68).request, 0, { select: sel });
const CF = interp.compileDecoder(s.apis.get(68).request, 0);
compare('ConsumerGroupHeartbeat v0 request', '6 fields', () => interp.runDecoder(C, cgh, 0, cgh.length), 'every field', () => interp.runDecoder(CF, cgh, 0, cgh.length));
const A = interp.compileDecoder(s.apis.get(0).request, 11, { select: ['Acks'] });
const F = interp.compileDecoder(s.apis.get(0).request, 11);
const I = interp.compileDecoder(s.apis.get(0).request, 11, { select: ['TopicData.Name', 'TopicData.PartitionData.Index'] });
compare('Produce v11 request, 10 partitions', 'Acks only', () => interp.runDecoder(A, produce, 0, produce.length), 'every field', () => interp.runDecoder(F, produce, 0, produce.length));
compare('Produce v11 request, 10 partitions', 'topics, parts', () => interp.runDecoder(I, produce, 0, produce.length), 'every field', () => interp.runDecoder(F, produce, 0, produce.length));
const MT = interp.compileDecoder(s.apis.get(3).response, 12, { select: [], tapErrorCodes: true });
const MF = interp.compileDecoder(s.apis.get(3).response, 12, { tapErrorCodes: true });
let check;
try {
  check = interp.runDecoder(MT, metadata, 0, metadata.length);
} catch (e) {
  check = { complete: false, errorCodes: [e.message] };
}
if (!check.complete || check.errorCodes?.join() !== '6') {
  console.error(`the Metadata response does not decode as written: ${JSON.stringify(check.errorCodes)}`);
  process.exit(1);
}
compare('Metadata v12 response, 12 partitions', 'error tap', () => interp.runDecoder(MT, metadata, 0, metadata.length), 'every field', () => interp.runDecoder(MF, metadata, 0, metadata.length));
const MS = scan.errorScanPlan(s.apis.get(3).response, 12);
const scanner = new scan.ErrorScan();
const scanOnce = () => {
  scanner.reset(MS, metadata.length).feed(metadata, 0, metadata.length);
  return scanner.finish();
};
if (scanOnce() !== scan.SCANNED || scanner.codes.join() !== '6') {
  console.error(`the error-code scan does not read the Metadata response: ${scanner.status} ${scanner.codes}`);
  process.exit(1);
}
compare('Metadata v12 response, 12 partitions', 'error scan', scanOnce, 'error tap', () => interp.runDecoder(MT, metadata, 0, metadata.length));
