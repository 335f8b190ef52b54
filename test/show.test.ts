/**
 * kcid show (src/show/): byte ranges against tshark's PDML on the real captures, the ranges of every
 * field of every schema version tiling the message, malformed, truncated and gap cases, record batches
 * and their CRC-32C (RFC 3720's vectors), and secrets hidden in the tree and the hex dump.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { crc32c } from '../src/show/crc32c.js';
import { Cursor, walkMessage, WalkFail, type ShowNode } from '../src/show/walk.js';
import { locate } from '../src/show/locate.js';
import { messageTree } from '../src/show/message.js';
import { protocol } from '../src/kafka/protocol.js';
import { decodeBody, BodyError } from '../src/kafka/bodies.js';
import { decodeBody as decodeSchemaBody } from '../src/kafka/schema/interpreter.js';
import { bodyJson, HIDDEN } from '../src/kafka/secrets.js';
import { layoutFor } from '../src/kafka/schema/model.js';
import { randomMessage } from './schema/encoder.js';
import { bool, compactArray, compactString, concat, int16, int32, int64, int8, taggedFields, uvarint, varint, array, string } from './builder/kafka.js';
import { Scenario } from './builder/scenario.js';
import { ID_A, runKcid } from './helpers.js';

const p = protocol();
const FIXTURES = join(__dirname, '../fixtures');

/** A node's children cover its range exactly, in order; returns the leaves. */
function checkTiling(n: ShowNode, where: string): void {
  if (n.children === undefined) return;
  let at = n.offset;
  for (const k of n.children) {
    expect(k.offset, `${where}: ${k.path} starts where the previous field ended`).toBe(at);
    expect(k.length, `${where}: ${k.path}`).toBeGreaterThanOrEqual(0);
    checkTiling(k, where);
    at = k.offset + k.length;
  }
  if (n.children.length > 0) expect(at, `${where}: ${n.path}'s fields end where it ends`).toBe(n.offset + n.length);
}

function* allNodes(n: ShowNode): Generator<ShowNode> {
  yield n;
  for (const k of n.children ?? []) yield* allNodes(k);
}

describe('CRC-32C', () => {
  it('gives the check value and RFC 3720 B.4 vectors', () => {
    expect(crc32c(Buffer.from('123456789'))).toBe(0xe3069283);
    expect(crc32c(new Uint8Array(32))).toBe(0x8a9136aa);
    expect(crc32c(new Uint8Array(32).fill(0xff))).toBe(0x62a8ab43);
    expect(crc32c(Uint8Array.from({ length: 32 }, (_, i) => i))).toBe(0x46dd794e);
    expect(crc32c(Uint8Array.from({ length: 32 }, (_, i) => 31 - i))).toBe(0x113fdb5c);
  });
});

describe('every field of every schema version', () => {
  it('tiles the bytes of generated bodies, and the walk ends where the interpreter does', () => {
    let messages = 0;
    for (const api of p.apis) {
      for (const kind of ['request', 'response'] as const) {
        const m = kind === 'request' ? api.request : api.response;
        for (let v = api.definedVersions.lo; v <= Math.min(api.definedVersions.hi, 200); v++) {
          if (layoutFor(m, v) === null) continue;
          for (const seed of [1, 2]) {
            const { bytes } = randomMessage(m, v, seed * 104729 + v * 31 + api.key);
            const d = decodeSchemaBody(p.schemas, kind, api.key, v, bytes, 0, bytes.length);
            const root: ShowNode = { path: '', offset: 0, length: bytes.length, type: 'body', value: null, children: [] };
            const c = new Cursor(bytes, 0, bytes.length, bytes.length, 0, {});
            walkMessage(c, m, v, '', root.children!);
            expect(c.pos, `${api.name} v${v} ${kind}: the walk ends where the interpreter does`).toBe(d!.end);
            root.length = c.pos;
            checkTiling(root, `${api.name} v${v} ${kind}`);
            messages++;
          }
        }
      }
    }
    expect(messages).toBeGreaterThan(1400);
  });

  it('breaks where the interpreter breaks, in its words, on cut and bit-flipped bodies', () => {
    let broken = 0;
    for (const api of p.apis) {
      for (const kind of ['request', 'response'] as const) {
        const m = kind === 'request' ? api.request : api.response;
        const v = api.definedVersions.hi > 200 ? api.definedVersions.lo : api.definedVersions.hi;
        if (layoutFor(m, v) === null) continue;
        const { bytes } = randomMessage(m, v, 7 + api.key);
        for (let k = 0; k < Math.min(bytes.length, 24); k++) {
          const bad = Uint8Array.from(bytes);
          bad[k] = bad[k]! ^ 0xc5;
          let want: string | null = null;
          try {
            // The interpreter at this version (bodies.ts's decodeBody would read a failed ApiVersions response again as v0, as messageTree does).
            decodeSchemaBody(p.schemas, kind, api.key, v, bad, 0, bad.length, {}, bad.length);
          } catch (e) {
            if (!(e instanceof BodyError)) throw e;
            want = e.problem;
          }
          let got: string | null = null;
          try {
            walkMessage(new Cursor(bad, 0, bad.length, bad.length, 0, {}), m, v, '', []);
          } catch (e) {
            if (!(e instanceof WalkFail)) throw e;
            got = e.problem;
          }
          expect(got, `${api.name} v${v} ${kind} flip ${k}`).toBe(want);
          if (want !== null) broken++;
        }
      }
    }
    expect(broken).toBeGreaterThan(100);
  });
});

describe('hostile bytes', () => {
  it('random bodies of every API: a tree or a WalkFail, and the tree tiles what was read', () => {
    let seed = 12345;
    const next = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff);
    for (const api of p.apis) {
      for (const kind of ['request', 'response'] as const) {
        const m = kind === 'request' ? api.request : api.response;
        const v = api.definedVersions.hi > 200 ? api.definedVersions.lo : api.definedVersions.hi;
        if (layoutFor(m, v) === null) continue;
        for (let k = 0; k < 30; k++) {
          const bytes = Uint8Array.from({ length: next() % 96 }, () => (next() % 3 === 0 ? 0xff : next() & 0xff));
          const tree = messageTree(kind, concat(int32(bytes.length + 4), kind === 'request' ? concat(int16(api.key), int16(v), int32(1)) : int32(1), bytes), Infinity, p, { apiKey: api.key, apiVersion: v, clientId: null });
          checkTiling(tree.root, `${api.name} v${v} ${kind} #${k}`);
        }
      }
    }
  });
});

// tshark's field names for what kcid show lists, and the last part of kcid's paths they match.
const PDML_FIELDS: Record<string, (path: string) => boolean> = {
  'kafka.len': (x) => x === 'size',
  'kafka.api_key': (x) => x === 'header.RequestApiKey',
  'kafka.api_version': (x) => x === 'header.RequestApiVersion',
  'kafka.correlation_id': (x) => x === 'header.CorrelationId',
  'kafka.client_id': (x) => x === 'header.ClientId',
  'kafka.topic_name': (x) => /(^|\.)(Name|Topic|TopicName)$/.test(x),
  'kafka.partition_id': (x) => /(^|\.)(Index|PartitionIndex|Partition|PartitionId|PartitionIndexes\[\d+\]|Partitions\[\d+\])$/.test(x),
  'kafka.error': (x) => /(^|\.)ErrorCode$/.test(x),
  'kafka.message_size': (x) => x.endsWith('.batchLength'),
  'kafka.message_magic': (x) => x.endsWith('.magic'),
  'kafka.batch_crc': (x) => x.endsWith('.crc'),
  'kafka.batch_codec': (x) => x.endsWith('.attributes'),
  'kafka.batch_last_offset_delta': (x) => x.endsWith('.lastOffsetDelta'),
  'kafka.batch_first_timestamp': (x) => x.endsWith('.baseTimestamp'),
  'kafka.batch_last_timestamp': (x) => x.endsWith('.maxTimestamp'),
  'kafka.producer_id': (x) => x.endsWith('.producerId') || x.endsWith('ProducerId'),
  'kafka.producer_epoch': (x) => x.endsWith('.producerEpoch') || x.endsWith('ProducerEpoch'),
  'kafka.batch_base_sequence': (x) => x.endsWith('.baseSequence'),
  'kafka.batch_size': (x) => x.endsWith('.recordCount'),
};

const PDML_CAPTURES: [string, number[]][] = [
  ['kcat-mock-produce.pcap', [37237, 37879, 44615]],
  ['kcat-mock-consumer-group.pcapng', [34795, 35261, 42175]],
  ['kcat-mock-nano.pcap', [33209, 34689, 38085]],
  ['kafkajs-mock-group.pcap', [35121, 39191, 43003]],
  ['kcat-mock-metadata-any.pcap', [36395, 42575, 46195]],
];

let tshark = false;
try {
  execFileSync('tshark', ['--version'], { stdio: 'ignore' });
  tshark = true;
} catch {
  tshark = false;
}

describe.skipIf(!tshark)("byte ranges against tshark's PDML on the real captures", () => {
  for (const [name, ports] of PDML_CAPTURES) {
    it(name, async () => {
      const file = join(FIXTURES, name);
      if (!existsSync(file)) return;
      const args = ['-r', file, ...ports.flatMap((port) => ['-d', `tcp.port==${port},kafka`]), '-T', 'pdml'];
      const pdml = execFileSync('tshark', args, { maxBuffer: 64 * 1024 * 1024, stdio: ['ignore', 'pipe', 'ignore'] }).toString('utf8');
      // Per frame, per Kafka PDU: the fields tshark gives with pos and size.
      const byFrame = new Map<number, { name: string; pos: number; size: number; show: string }[][]>();
      for (const packet of pdml.split('<packet>').slice(1)) {
        const frame = Number(/<field name="frame.number"[^>]*show="(\d+)"/.exec(packet)![1]);
        const pdus = packet.split('<proto name="kafka"').slice(1);
        byFrame.set(
          frame,
          pdus.map((pdu) =>
            [...pdu.matchAll(/<field name="(kafka\.[a-z_.]+)"[^>]*?size="(\d+)" pos="(\d+)"(?: show="([^"]*)")?/g)].map((x) => ({ name: x[1]!, size: Number(x[2]), pos: Number(x[3]), show: x[4] ?? '' })),
          ),
        );
      }
      const found = await locate(file, null, p, new Set(ports));
      let compared = 0;
      for (const at of found.messages) {
        if (at.pieces.length !== 1 || at.pieces[0]!.frame !== at.frame) continue; // tshark's positions are in its reassembled buffer
        const tree = messageTree(at.kind, at.bytes, at.avail, p, at.request, {});
        const pdus = byFrame.get(at.frame) ?? [];
        // tshark's PDU whose size field is this message's.
        // tshark's PDU of this message: its correlation id, and an API key on the wire for a request only.
        const pdu = pdus.find(
          (fields) =>
            fields.some((f) => f.name === 'kafka.correlation_id' && Number(f.show) === tree.correlationId) &&
            fields.some((f) => f.name === 'kafka.api_key' && f.size === 2) === (tree.kind === 'request'),
        );
        if (pdu === undefined) continue;
        const base = pdu.find((f) => f.name === 'kafka.len')!.pos;
        const nodes = [...allNodes(tree.root)];
        for (const f of pdu) {
          const match = PDML_FIELDS[f.name];
          const off = f.pos - base;
          if (match === undefined || f.size === 0 || off < 0 || off >= at.bytes.length) continue;
          if (f.name === 'kafka.producer_id' && tree.apiKey === 22) continue; // tshark 4.0 does not decode InitProducerId v4
          const hit = nodes.find((n) => n.offset === off && n.length === f.size && match(n.path));
          expect(hit, `${name} frame ${at.frame} ${tree.kind} ${f.name} [${off}, ${off + f.size})`).toBeDefined();
          compared++;
        }
      }
      expect(compared).toBeGreaterThan(20);
    });
  }
});

describe('kcid show on built captures', () => {
  const encoder = new TextEncoder();

  it('a request header with tag 0: ClientInstanceId in base64 and hex, every field tiled', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    c.request({ apiKey: 18, apiVersion: 3, clientId: 'app', clientInstanceId: ID_A, body: concat(compactString('kcid-test'), compactString('1.0'), taggedFields()) });
    const frame = s.frames.length;
    const r = await runKcid(['show', s.file(), String(frame), '--format', 'json']);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as { messages: { tree: ShowNode; frames: unknown[]; kind: string }[] };
    expect(doc.messages).toHaveLength(1);
    const tree = doc.messages[0]!.tree;
    checkTiling(tree, 'ApiVersions v3');
    const tag = [...allNodes(tree)].find((n) => n.path === 'header.ClientInstanceId')!;
    expect(tag.value).toBe(Buffer.from(ID_A).toString('base64url'));
    expect(tag.hex).toBe(Buffer.from(ID_A).toString('hex').replace(/^(.{8})(.{4})(.{4})(.{4})/, '$1-$2-$3-$4-'));
    expect([...allNodes(tree)].filter((n) => n.path.startsWith('header.ClientInstanceId.')).map((n) => [n.path, n.value, n.length])).toEqual([
      ['header.ClientInstanceId.tag', 0, 1],
      ['header.ClientInstanceId.size', 16, 1],
      ['header.ClientInstanceId.value', tag.value, 16],
    ]);
    expect(doc.messages[0]!.frames).toEqual([{ frame, offset: 0, length: tree.length }]);
    const text = await runKcid(['show', s.file(), String(frame)]);
    expect(text.stdout).toContain('ClientSoftwareName: "kcid-test"');
  });

  it('a malformed body: the fields before the break, the offset, the finding\'s words, the rest raw', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    // ApiVersions v3 (a body kcid reads): ClientSoftwareName's compact length says 99 bytes, 3 follow.
    c.request({ apiKey: 18, apiVersion: 3, clientId: 'app', body: concat(uvarint(100), encoder.encode('abc')) });
    const file = s.file();
    const r = await runKcid(['show', file, String(s.frames.length), '--format', 'json']);
    const msg = (JSON.parse(r.stdout) as { messages: { error: { offset: number; message: string }; tree: ShowNode }[] }).messages[0]!;
    expect(msg.error.message).toBe('ApiVersions v3 request: ClientSoftwareName: length 99 overruns the frame by 96 bytes');
    checkTiling(msg.tree, 'malformed');
    const header = 4 + 2 + 2 + 4 + 5 + 1;
    const last = msg.tree.children![msg.tree.children!.length - 1]!;
    expect([last.path, last.offset, last.length]).toEqual(['malformed', header, 4]);
    expect(msg.error.offset).toBe(header + 1);
    const analyze = await runKcid(['analyze', file, '--format', 'json']);
    expect(analyze.stdout).toContain(msg.error.message);
  });

  it('a gap: the frames that carried the bytes, the gap, the walk stopping at it', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092', mss: 20 });
    const names = ['alpha', 'bravo', 'charlie', 'delta', 'echo'];
    c.request({ apiKey: 3, apiVersion: 1, clientId: 'app', body: array(names, string) });
    const total = 4 + 8 + 5 + 4 + names.reduce((n, x) => n + 2 + x.length, 0);
    // Drop the second data segment of the request (bytes [20, 40)).
    s.frames.splice(4, 1);
    const last = s.frames.length;
    const r = await runKcid(['show', s.file(), String(last), '--format', 'json']);
    const msg = (JSON.parse(r.stdout) as { messages: { gaps: unknown[]; frames: { frame: number }[]; tree: ShowNode; error: { message: string } }[] }).messages[0]!;
    expect(msg.gaps).toEqual([{ offset: 20, length: 20 }]);
    expect(msg.frames.map((f) => f.frame)).toEqual([4, 5, 6].slice(0, Math.ceil((total - 20) / 20)));
    expect(msg.error.message).toContain('the capture misses');
    checkTiling(msg.tree, 'gap');
    const text = await runKcid(['show', s.file(), String(last)]);
    expect(text.stdout).toContain('gaps (bytes the capture misses): [20, 40)');
    expect(text.stdout).toMatch(/0010 .*\.\. \.\./);
  });

  it('record batches: header fields, CRC checked, records listed without their payload unless --payload', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    const key = encoder.encode('k1');
    const value = encoder.encode('PAYLOAD-VALUE-xyz');
    const body = concat(int8(0), varint(0), varint(0), varint(key.length), key, varint(value.length), value, varint(0));
    const record = concat(varint(body.length), body);
    const afterCrc = concat(int16(0), int32(0), int64(1000n), int64(1000n), int64(-1n), int16(-1), int32(-1), int32(1), record);
    const batch = concat(int64(0n), int32(4 + 1 + 4 + afterCrc.length), int32(0), int8(2), int32(crc32c(afterCrc) | 0), afterCrc);
    const produce = concat(string(null), int16(1), int32(1000), array([0], () => concat(string('t'), array([0], () => concat(int32(0), int32(batch.length), batch)))));
    c.request({ apiKey: 0, apiVersion: 3, clientId: 'app', body: produce });
    const file = s.file();
    const r = await runKcid(['show', file, String(s.frames.length)]);
    expect(r.stdout).toContain('crc: 0x');
    expect(r.stdout).toContain('CRC-32C correct');
    expect(r.stdout).toContain('compression none, timestamp CreateTime');
    expect(r.stdout).toContain('records[0]: 26 bytes, key 2 bytes, value 17 bytes');
    expect(r.stdout).not.toContain('PAYLOAD-VALUE');
    expect(r.stdout).not.toContain(Buffer.from('PAYLOAD').toString('hex').slice(0, 8));
    const withPayload = await runKcid(['show', file, String(s.frames.length), '--payload']);
    expect(withPayload.stdout).toContain('"PAYLOAD-VALUE-xyz"'.slice(1, -1));
    // A wrong CRC is said so.
    const s2 = new Scenario();
    const c2 = s2.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    const bad = Uint8Array.from(batch);
    bad[bad.length - 1] ^= 1;
    c2.request({ apiKey: 0, apiVersion: 3, clientId: 'app', body: concat(string(null), int16(1), int32(1000), array([0], () => concat(string('t'), array([0], () => concat(int32(0), int32(bad.length), bad))))) });
    const r2 = await runKcid(['show', s2.file(), String(s2.frames.length)]);
    expect(r2.stdout).toMatch(/CRC-32C wrong: the bytes give 0x[0-9a-f]{8}/);
  });

  it('TLS: the decrypted stream, the same tree as the plaintext leg the server relayed it to', async () => {
    const file = join(FIXTURES, 'kafkajs-tls-tls13-chacha20.pcap');
    const keys = join(FIXTURES, 'kafkajs-tls-tls13-chacha20.keys');
    type Doc = { messages: { tls: boolean; frames: { frame: number }[]; tree: ShowNode; apiName: string }[] };
    for (const [tlsFrame, plainFrame] of [
      [8, 13],
      [18, 15],
      [25, 26],
    ] as const) {
      const tls = JSON.parse((await runKcid(['show', file, String(tlsFrame), '--tls-keylog', keys, '--format', 'json'])).stdout) as Doc;
      const plain = JSON.parse((await runKcid(['show', file, String(plainFrame), '--format', 'json'])).stdout) as Doc;
      expect(tls.messages.map((m) => m.tls)).toEqual([true]);
      expect(plain.messages.map((m) => m.tls)).toEqual([false]);
      expect(tls.messages[0]!.tree).toEqual(plain.messages[0]!.tree);
      checkTiling(tls.messages[0]!.tree, `TLS frame ${tlsFrame}`);
    }
    const without = await runKcid(['show', file, '8']);
    expect(without.stdout).toContain('no Kafka message ends in it');
  });

  it('many large messages in progress: memory follows the bytes captured, not the sizes declared', async () => {
    const s = new Scenario();
    for (let i = 0; i < 200; i++) {
      const c = s.connect({ client: `10.0.${i >> 8}.${i & 255}:50000`, broker: '10.1.0.1:9092' });
      // A Produce request declaring 60 MiB, of which 12 bytes are sent.
      c.clientBytes(concat(int32(60 * 1024 * 1024), int16(0), int16(7), int32(1), int16(-1)));
    }
    const file = s.file();
    const r = await runKcid(['show', file, String(s.frames.length)]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('no Kafka message ends in it');
    const found = await locate(file, s.frames.length, p, new Set([9092]));
    // 200 messages of 12 bytes each held, in buffers of at most 4 KiB (60 MiB each if sized from their prefix).
    expect(found.peakBytes).toBeLessThanOrEqual(200 * 4096);
    expect(found.peakBytes).toBeGreaterThanOrEqual(200 * 12);
  });

  it('two messages in one frame (kafkajs frame 60): both shown, --correlation-id and --api select', async () => {
    const file = join(FIXTURES, 'kafkajs-mock-group.pcap');
    const ports = '35121,39191,43003';
    type Doc = { messages: { correlationId: number; apiName: string; kind: string }[]; notes: string[] };
    const all = JSON.parse((await runKcid(['show', file, '60', '-p', ports, '--format', 'json'])).stdout) as Doc;
    expect(all.messages.map((m) => [m.kind, m.apiName, m.correlationId])).toEqual([
      ['request', 'OffsetFetch', 5],
      ['request', 'OffsetFetch', 6],
    ]);
    const one = JSON.parse((await runKcid(['show', file, '60', '-p', ports, '--format', 'json', '--correlation-id', '6'])).stdout) as Doc;
    expect(one.messages.map((m) => m.correlationId)).toEqual([6]);
    expect(one.notes).toEqual(['1 of the 2 messages ending in this frame are left out by --api, --correlation-id or --client']);
    const none = JSON.parse((await runKcid(['show', file, '60', '-p', ports, '--format', 'json', '--api', 'Produce'])).stdout) as Doc;
    expect(none.messages).toEqual([]);
  });

  it('hostile records: a batch longer than its records field, a key past its record, 1,500 array elements', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    const produce = (records: Uint8Array) => concat(string(null), int16(1), int32(1000), array([0], () => concat(string('t'), array([0], () => concat(int32(0), int32(records.length), records)))));
    // A batch header that claims 1000 bytes after its length; 49 follow.
    const long = concat(int64(0n), int32(1000), int32(0), int8(2), new Uint8Array(4), new Uint8Array(40));
    c.request({ apiKey: 0, apiVersion: 3, clientId: 'app', body: produce(long) });
    const f1 = s.frames.length;
    // One record whose key length (100) runs past the record.
    const body = concat(int8(0), varint(0), varint(0), varint(100), encoder.encode('k'));
    const rec = concat(varint(body.length), body);
    const afterCrc = concat(int16(0), int32(0), int64(0n), int64(0n), int64(-1n), int16(-1), int32(-1), int32(1), rec);
    const batch = concat(int64(0n), int32(9 + afterCrc.length), int32(0), int8(2), int32(crc32c(afterCrc) | 0), afterCrc);
    c.request({ apiKey: 0, apiVersion: 3, clientId: 'app', body: produce(batch) });
    const f2 = s.frames.length;
    const names = Array.from({ length: 1500 }, (_, i) => `t${i}`);
    c.request({ apiKey: 3, apiVersion: 1, clientId: 'app', body: array(names, string) });
    const f3 = s.frames.length;
    const file = s.file();
    type Doc = { messages: { tree: ShowNode; error: unknown }[] };
    const tree = async (f: number) => (JSON.parse((await runKcid(['show', file, String(f), '--format', 'json'])).stdout) as Doc).messages[0]!;
    const t1 = await tree(f1);
    expect(t1.error).toBeNull();
    checkTiling(t1.tree, 'long batch');
    expect([...allNodes(t1.tree)].find((n) => n.path.endsWith('Records.rest'))!.note).toBe('batch length 1000 overruns the records by 951 bytes (a partial batch: Fetch responses may end with one)');
    const t2 = await tree(f2);
    checkTiling(t2.tree, 'bad record');
    expect([...allNodes(t2.tree)].find((n) => n.path.endsWith('records.rest'))!.note).toBe('record 0: key length 100 overruns the record by 99 bytes');
    const t3 = await tree(f3);
    checkTiling(t3.tree, '1,500 topics');
    const topics = [...allNodes(t3.tree)].find((n) => n.path === 'Topics')!;
    expect(topics.children!.length).toBe(1 + 1000 + 1);
    expect(topics.children![1001]!.path).toBe('Topics[1000..1499]');
  });

  it('every batch CRC of the real captures checks', async () => {
    const found = await locate(join(FIXTURES, 'kcat-mock-produce.pcap'), null, p, new Set([37237, 37879, 44615]));
    let crcs = 0;
    for (const at of found.messages) {
      const tree = messageTree(at.kind, at.bytes, at.avail, p, at.request, {});
      for (const n of allNodes(tree.root)) {
        if (!n.path.endsWith('.crc')) continue;
        expect(n.note).toBe('CRC-32C correct');
        crcs++;
      }
      checkTiling(tree.root, `frame ${at.frame}`);
    }
    expect(crcs).toBe(4);
  });

  it('secrets: a SASL token and a sensitive config value hidden in the tree and the hex dump, and where a later message quotes the token', async () => {
    const TOKEN = 'eyJhbGciOiJSUzI1NiJ9.SECRETPAYLOAD.SIGNATURE';
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    const auth = encoder.encode(`n,,\x01auth=Bearer ${TOKEN}\x01\x01`);
    const corr = c.request({ apiKey: 36, apiVersion: 2, clientId: 'app', body: concat(uvarint(auth.length + 1), auth, taggedFields()) });
    const reqFrame = s.frames.length;
    c.respond(corr, concat(int16(58), compactString(`invalid token ${TOKEN}`), uvarint(1), int64(0n), taggedFields()));
    const resFrame = s.frames.length;
    // DescribeConfigs v4 response: one result, configs: a sensitive one (flag) and one named like a secret.
    const config = (name: string, value: string, sensitive: boolean) => concat(compactString(name), compactString(value), bool(false), int8(1), bool(sensitive), compactArray([value], (v) => concat(compactString(name), compactString(v), int8(1), taggedFields())), int8(1), compactString(null), taggedFields());
    const dcCorr = c.request({ apiKey: 32, apiVersion: 4, clientId: 'app', body: concat(compactArray([0], () => concat(int8(2), compactString('t'), compactArray(null, compactString), taggedFields())), bool(true), bool(false), taggedFields()) });
    c.respond(dcCorr, concat(int32(0), compactArray([0], () => concat(int16(0), compactString(null), int8(2), compactString('t'), compactArray([config('ssl.truststore.location', 'FLAGGED-SECRET', true), config('my.secret.thing', 'NAMED-SECRET', false), config('retention.ms', '1000', false)], (x) => x), taggedFields())), taggedFields()));
    const dcFrame = s.frames.length;
    const file = s.file();
    const outs: string[] = [];
    for (const f of [reqFrame, resFrame, dcFrame]) {
      for (const format of ['text', 'json']) {
        const r = await runKcid(['show', file, String(f), '--format', format]);
        expect(r.code).toBe(0);
        outs.push(r.stdout);
      }
    }
    for (const out of outs) {
      for (const secret of [TOKEN, 'SECRETPAYLOAD', 'FLAGGED-SECRET', 'NAMED-SECRET']) {
        expect(out).not.toContain(secret);
        expect(out).not.toContain(Buffer.from(secret).toString('hex').replace(/(..)/g, '$1 ').slice(0, 23));
      }
    }
    expect(outs[4]).toContain('retention.ms');
    expect(outs[4]).toContain('"1000"');
    expect(outs[2]).toContain(`ErrorMessage: invalid token ${HIDDEN}`);
    // --bodies too: the DescribeConfigs values and the quoted token.
    const rows = await runKcid(['requests', file, '--bodies', '--format', 'ndjson']);
    for (const secret of [TOKEN, 'SECRETPAYLOAD', 'FLAGGED-SECRET', 'NAMED-SECRET']) expect(rows.stdout).not.toContain(secret);
    expect(rows.stdout).toContain('"value":"1000"');
  });

  it('a malformed SaslAuthenticate: the raw rest of a message that can carry a secret is not shown', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    // SaslAuthenticate v0: AuthBytes says 200 bytes, the token's 24 follow.
    c.request({ apiKey: 36, apiVersion: 0, clientId: 'app', body: concat(int32(200), encoder.encode('hunter2-secret-password!')) });
    for (const format of ['text', 'json']) {
      const r = await runKcid(['show', s.file(), String(s.frames.length), '--format', format]);
      expect(r.stdout).toContain('length 200 overruns the frame by 176 bytes');
      expect(r.stdout).not.toContain('hunter2');
      expect(r.stdout).not.toContain(Buffer.from('hunter2').toString('hex').slice(0, 8));
      expect(r.stdout).not.toContain('68 75 6e 74');
    }
  });

  it('bodyJson hides DescribeConfigs values marked IsSensitive, their synonyms, and names like *.password', () => {
    const cfg = (name: string, value: string, sensitive: boolean) => concat(string(name), string(value), bool(false), int8(1), bool(sensitive), array([value], (v) => concat(string(`${name}.syn`), string(v), int8(1))));
    const body = concat(int32(0), array([0], () => concat(int16(0), string(null), int8(2), string('t'), array([cfg('a', 'S1', true), cfg('ssl.key.password', 'S2', false), cfg('sasl.jaas.config', 'S3', false), cfg('b', 'plain', false)], (x) => x))));
    const d = decodeBody('response', 32, 1, true, body, 0, body.length, body.length)!;
    const json = bodyJson('response', 32, 1, d.body);
    expect(json).not.toMatch(/S1|S2|S3/);
    expect(json.match(/\[hidden\]/g)).toHaveLength(6);
    expect(json).toContain('"value":"plain"');
  });

  it('usage errors: one line, exit 2', async () => {
    const s = new Scenario();
    s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    const file = s.file();
    for (const args of [['show', file], ['show', file, 'x'], ['show', file, file, '3'], ['show', file, '3:1'], ['show', file, '0']]) {
      const r = await runKcid(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
    }
  });
});
