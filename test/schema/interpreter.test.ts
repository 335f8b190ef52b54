/**
 * The interpreter on hand-written frames (test/schema/encoder.ts's Out writes each byte): malformed
 * bodies and their exact paths, hostile counts, prefixes, selections that stop early, record batch
 * summaries, and the JSON converter form.
 */
import { describe, expect, it } from 'vitest';
import { BodyError, compileDecoder, decodeBody, decodeRequest, decodeRequestHeader, runDecoder } from '../../src/kafka/schema/interpreter.js';
import { toKafkaJson, visitFields } from '../../src/kafka/schema/json.js';
import { API_KEY, builtinSchemas } from '../../src/kafka/schema/registry.js';
import { batchHeader, Out } from './encoder.js';

const s = builtinSchemas();
const plain = (v: unknown): unknown => JSON.parse(JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? `${x}n` : x instanceof Uint8Array ? [...x] : x)));

function bodyError(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(BodyError);
    return (e as Error).message;
  }
  throw new Error('decoded');
}

/** Produce v11 (flexible): no TransactionalId, acks -1, timeout 30000, topic "t" with `records.length` partitions. */
function produce11(records: number[], claimLast?: number): Uint8Array {
  const o = new Out();
  o.uvarint(0); // TransactionalId: null
  o.int16(-1); // Acks
  o.int32(30000); // TimeoutMs
  o.uvarint(2); // TopicData: 1 element
  o.uvarint(2); // Name: 1 byte
  o.u8(0x74); // "t"
  o.uvarint(records.length + 1); // PartitionData
  records.forEach((size, i) => {
    o.int32(i); // Index
    const last = i === records.length - 1;
    o.uvarint((last && claimLast !== undefined ? claimLast : size) + 1); // Records length
    o.raw(new Uint8Array(size));
    if (!last || claimLast === undefined) o.uvarint(0); // partition tags
  });
  if (claimLast === undefined) {
    o.uvarint(0); // topic tags
    o.uvarint(0); // body tags
  }
  return o.done();
}

describe('malformed bodies', () => {
  it('a length that overruns the frame names the path and by how much', () => {
    const b = produce11([3, 5, 4], 1048576);
    expect(bodyError(() => decodeBody(s, 'request', API_KEY.Produce, 11, b, 0, b.length))).toBe(
      'Produce v11 request: TopicData[0].PartitionData[2].Records: length 1048576 overruns the frame by 1048572 bytes',
    );
  });

  it('the same bytes as a prefix of a longer frame: incomplete, with what was read', () => {
    const b = produce11([3, 5, 4], 1048576);
    const d = decodeBody(s, 'request', API_KEY.Produce, 11, b, 0, b.length, {}, b.length + 1048572)!;
    expect(d.complete).toBe(false);
    expect(d.stoppedAt).toBe('TopicData[0].PartitionData[2].Records');
    expect(plain(d.value)).toEqual({
      TransactionalId: null,
      Acks: -1,
      TimeoutMs: 30000,
      TopicData: [{ Name: 't', PartitionData: [{ Index: 0, Records: { size: 3 } }, { Index: 1, Records: { size: 5 } }, { Index: 2 }] }],
    });
  });

  it('a complete frame decodes, and a selection stops after the last field it needs', () => {
    const b = produce11([3, 5]);
    const full = decodeBody(s, 'request', API_KEY.Produce, 11, b, 0, b.length)!;
    expect([full.complete, full.end, full.trailing]).toEqual([true, b.length, 0]);
    const acks = decodeBody(s, 'request', API_KEY.Produce, 11, b, 0, 3, { select: ['Acks'] }, b.length)!;
    expect([acks.complete, acks.end, plain(acks.value)]).toEqual([true, 3, { Acks: -1 }]);
    const idx = decodeBody(s, 'request', API_KEY.Produce, 11, b, 0, b.length, { select: ['TopicData.PartitionData.Index', 'TopicData.Name'] })!;
    expect(plain(idx.value)).toEqual({ TopicData: [{ Name: 't', PartitionData: [{ Index: 0 }, { Index: 1 }] }] });
    // A path that names no field in any version is a caller's bug.
    expect(() => compileDecoder(s.apis.get(0)!.request, 11, { select: ['TopicData.Partitions.Index'] })).toThrow(
      new RangeError('ProduceRequest has no field "TopicData.Partitions.Index" in any version'),
    );
    // One that exists in other versions only selects nothing here.
    expect(plain(decodeBody(s, 'request', API_KEY.Produce, 11, b, 0, b.length, { select: ['TopicData.TopicId'] })!.value)).toEqual({ TopicData: [{}] });
    // The compiled decoder is cached per message, version and selection.
    expect(compileDecoder(s.apis.get(0)!.request, 11, { select: ['Acks'] })).toBe(compileDecoder(s.apis.get(0)!.request, 11, { select: ['Acks'] }));
  });

  it('hostile counts are refused before anything is allocated (Kafka\'s own check)', () => {
    const o = new Out();
    o.int16(-1); // TransactionalId: null (v3, classic)
    o.int16(1);
    o.int32(100);
    o.int32(0x7fffffff); // TopicData count
    const b = o.done();
    expect(bodyError(() => decodeBody(s, 'request', API_KEY.Produce, 3, b, 0, b.length))).toBe(
      'Produce v3 request: TopicData: array count 2147483647 is larger than the 0 bytes left in the frame',
    );
    const t = new Out();
    t.uvarint(0);
    t.uvarint(0x7ffffff0); // tagged field count of GetTelemetrySubscriptions v1 (no fields)
    expect(bodyError(() => decodeBody(s, 'request', API_KEY.GetTelemetrySubscriptions, 1, t.done(), 1, 6))).toBe(
      'GetTelemetrySubscriptions v1 request: tagged field count 2147483632 is larger than the 0 bytes left in the frame',
    );
  });

  it('nulls where the version allows none, negative lengths, long varints, tags out of order', () => {
    const o = new Out();
    o.int16(-1);
    o.int16(1);
    o.int32(100);
    o.int32(1);
    o.int16(-1); // Name: null, not nullable
    const b = o.done();
    expect(bodyError(() => decodeBody(s, 'request', API_KEY.Produce, 3, b, 0, b.length))).toBe('Produce v3 request: TopicData[0].Name: null, but Name is not nullable in v3');
    b[b.length - 1] = 0xfe; // -2
    expect(bodyError(() => decodeBody(s, 'request', API_KEY.Produce, 3, b, 0, b.length))).toBe('Produce v3 request: TopicData[0].Name: string length -2 is negative');
    const v = Uint8Array.from([0xff, 0xff, 0xff, 0xff, 0xff, 0x01]);
    expect(bodyError(() => decodeBody(s, 'request', API_KEY.GetTelemetrySubscriptions, 1, v, 0, v.length))).toBe('GetTelemetrySubscriptions v1 request: varint is longer than 5 bytes');
    const tags = Uint8Array.from([2, 5, 0, 3, 0]);
    expect(bodyError(() => decodeBody(s, 'request', API_KEY.GetTelemetrySubscriptions, 1, tags, 0, tags.length))).toBe(
      'GetTelemetrySubscriptions v1 request: tag 3 follows tag 5: tags must be in increasing order',
    );
    const cut = Uint8Array.from([0, 3]);
    expect(bodyError(() => decodeBody(s, 'response', API_KEY.GetTelemetrySubscriptions, 1, cut, 0, cut.length))).toBe(
      'GetTelemetrySubscriptions v1 response: ThrottleTimeMs: needs 4 bytes, the frame has 2 left',
    );
  });

  it('a known tag of the wrong size: request header v2 tag 0 with 8 or 20 bytes', () => {
    const head = [0, 3, 0, 12, 0, 0, 0, 7, 0xff, 0xff, 1, 0];
    const short = Uint8Array.from([...head, 8, ...new Array(8).fill(9)]);
    expect(bodyError(() => decodeRequestHeader(s, 2, short, 0, short.length))).toBe('request header v2: ClientInstanceId: tag 0 has 8 bytes, too few for its value');
    const long = Uint8Array.from([...head, 20, ...new Array(20).fill(9)]);
    expect(bodyError(() => decodeRequestHeader(s, 2, long, 0, long.length))).toBe('request header v2: ClientInstanceId: tag 0 has 20 bytes, its value took 16');
    const unknown = Uint8Array.from([...head.slice(0, 10), 1, 7, 3, 1, 2, 3]);
    expect(plain(decodeRequestHeader(s, 2, unknown, 0, unknown.length)!.value)).toEqual({
      RequestApiKey: 3,
      RequestApiVersion: 12,
      CorrelationId: 7,
      ClientId: null,
      _unknownTaggedFields: [{ tag: 7, size: 3 }],
    });
  });

  it('an undefined version or API gives null, trailing bytes are counted', () => {
    expect(decodeBody(s, 'request', API_KEY.Produce, 14, new Uint8Array(4), 0, 4)).toBe(null);
    expect(decodeBody(s, 'request', 999, 0, new Uint8Array(4), 0, 4)).toBe(null);
    const b = Uint8Array.from([0, 0, 7, 7]); // GetTelemetrySubscriptions v1: no tags, then 3 stray bytes
    expect(decodeBody(s, 'request', API_KEY.GetTelemetrySubscriptions, 1, b, 1, 4)!.trailing).toBe(2);
  });
});

describe('records', () => {
  it('summarised from the batch headers when asked: codec, flags, producer, counts; a cut batch as truncated bytes', () => {
    const records = new Out();
    records.raw(batchHeader(100n, 1 | 16, 4242n, 3)); // gzip, transactional
    records.raw(batchHeader(103n, 32 | 8, -1n, 1)); // control, LogAppendTime
    records.raw([0, 0, 0, 0, 0, 0, 0, 1, 0, 0]); // 10 bytes of a third batch
    const r = records.done();
    const o = new Out();
    o.int16(-1);
    o.int16(1);
    o.int32(100);
    o.int32(1);
    o.int16(1);
    o.u8(0x74);
    o.int32(1);
    o.int32(0);
    o.int32(r.length);
    o.raw(r);
    const b = o.done();
    const sized = decodeBody(s, 'request', API_KEY.Produce, 3, b, 0, b.length)!;
    expect(plain(sized.value)).toEqual({ TransactionalId: null, Acks: 1, TimeoutMs: 100, TopicData: [{ Name: 't', PartitionData: [{ Index: 0, Records: { size: 132 } }] }] });
    const d = decodeBody(s, 'request', API_KEY.Produce, 3, b, 0, b.length, { records: 'summary', select: ['TopicData.PartitionData.Records'] })!;
    const common = { size: 61, magic: 2, partitionLeaderEpoch: 7, crc: 0x01020304, baseTimestamp: '1700000000000n', maxTimestamp: '1700000000999n', producerEpoch: 3, baseSequence: 42 };
    expect(plain(d.value)).toEqual({
      TopicData: [
        {
          PartitionData: [
            {
              Records: {
                size: 132,
                batches: [
                  { ...common, baseOffset: '100n', compression: 'gzip', timestampType: 'CreateTime', transactional: true, control: false, lastOffsetDelta: 2, producerId: '4242n', recordCount: 3 },
                  { ...common, baseOffset: '103n', compression: 'none', timestampType: 'LogAppendTime', transactional: false, control: true, lastOffsetDelta: 0, producerId: '-1n', recordCount: 1 },
                ],
                batchCount: 2,
                recordCount: 4,
                truncatedBytes: 10,
              },
            },
          ],
        },
      ],
    });
  });

  it('magic 0 and 1 message sets: counted with their sizes', () => {
    const m = new Out();
    m.int64(5n); // offset
    m.int32(14 + 4); // size: crc 4, magic 1, attributes 1, key -1 (4), value 4 bytes + 4 length = 18
    m.int32(0xdeadbeef);
    m.u8(0); // magic 0
    m.u8(2); // snappy
    m.int32(-1); // key: null
    m.int32(4); // value: 4 bytes
    m.raw([1, 2, 3, 4]);
    const r = m.done();
    const o = new Out();
    o.int16(1);
    o.int32(100);
    o.int32(1);
    o.int16(1);
    o.u8(0x74);
    o.int32(1);
    o.int32(0);
    o.int32(r.length);
    o.raw(r);
    const b = o.done();
    const d = decodeBody(s, 'request', API_KEY.Produce, 0, b, 0, b.length, { records: 'summary' })!;
    const rec = plain(d.value) as { TopicData: { PartitionData: { Records: unknown }[] }[] };
    expect(rec.TopicData[0]!.PartitionData[0]!.Records).toEqual({
      size: 30,
      batches: [
        {
          baseOffset: '5n',
          size: 30,
          magic: 0,
          partitionLeaderEpoch: null,
          crc: 0xdeadbeef,
          compression: 'snappy',
          timestampType: 'CreateTime',
          transactional: false,
          control: false,
          lastOffsetDelta: null,
          baseTimestamp: null,
          maxTimestamp: null,
          producerId: null,
          producerEpoch: null,
          baseSequence: null,
          recordCount: 1,
        },
      ],
      batchCount: 1,
      recordCount: 1,
      truncatedBytes: 0,
    });
  });
});

describe('Kafka\'s JSON converter form', () => {
  it('lowerCamelCase names in schema order, int64 exact, UUIDs in base64, records and bytes as sizes', () => {
    // Produce v13: topics by TopicId
    const o = new Out();
    o.uvarint(4);
    o.raw([0x74, 0x78, 0x6e]); // TransactionalId "txn"
    o.int16(-1);
    o.int32(1500);
    o.uvarint(2);
    o.raw(Uint8Array.from({ length: 16 }, (_, i) => i * 17)); // TopicId
    o.uvarint(2);
    o.int32(4);
    o.uvarint(7 + 1);
    o.raw(new Uint8Array(7));
    o.uvarint(0);
    o.uvarint(0);
    o.uvarint(0);
    const b = o.done();
    const m = s.apis.get(API_KEY.Produce)!.request;
    const d = decodeBody(s, 'request', API_KEY.Produce, 13, b, 0, b.length)!;
    expect(toKafkaJson(d.value, m, 13)).toBe(
      '{"transactionalId":"txn","acks":-1,"timeoutMs":1500,"topicData":[{"topicId":"ABEiM0RVZneImaq7zN3u_w","partitionData":[{"index":4,"recordsSizeInBytes":7}]}]}',
    );
    const replace = new Map([['TransactionalId', '"[hidden]"'], ['TopicData.PartitionData.Records', '"cut"']]);
    expect(toKafkaJson(d.value, m, 13, { replace })).toBe(
      '{"transactionalId":"[hidden]","acks":-1,"timeoutMs":1500,"topicData":[{"topicId":"ABEiM0RVZneImaq7zN3u_w","partitionData":[{"index":4,"records":"cut"}]}]}',
    );
    const seen: string[] = [];
    visitFields(d.value, m, 13, (f, _v, path) => seen.push(`${path}:${f.type}`));
    expect(seen).toEqual([
      'TransactionalId:string',
      'Acks:int16',
      'TimeoutMs:int32',
      'TopicData:[]TopicProduceData',
      'TopicData[0].TopicId:uuid',
      'TopicData[0].PartitionData:[]PartitionProduceData',
      'TopicData[0].PartitionData[0].Index:int32',
      'TopicData[0].PartitionData[0].Records:records',
    ]);
  });

  it('SaslAuthenticate: the token is a size, never its bytes; an int64 beyond 2^53 is exact', () => {
    const o = new Out();
    o.uvarint(6);
    o.raw([0x73, 0x65, 0x63, 0x72, 0x65]); // AuthBytes "secre"
    o.uvarint(0);
    const b = o.done();
    const m = s.apis.get(API_KEY.SaslAuthenticate)!;
    const d = decodeBody(s, 'request', m.key, 2, b, 0, b.length)!;
    expect(toKafkaJson(d.value, m.request, 2)).toBe('{"authBytesSizeInBytes":5}');
    const r = new Out();
    r.int16(0);
    r.uvarint(0); // ErrorMessage null
    r.uvarint(1); // AuthBytes empty
    r.int64(9007199254740993n); // SessionLifetimeMs
    r.uvarint(0);
    const rb = r.done();
    const rd = decodeBody(s, 'response', m.key, 2, rb, 0, rb.length)!;
    expect(toKafkaJson(rd.value, m.response, 2)).toBe('{"errorCode":0,"errorMessage":null,"authBytesSizeInBytes":0,"sessionLifetimeMs":9007199254740993}');
  });
});

it('runDecoder refuses a bad range', () => {
  const d = compileDecoder(s.apis.get(0)!.request, 3)!;
  expect(() => runDecoder(d, new Uint8Array(4), 3, 2)).toThrow(RangeError);
});

describe('decodeRequest: header by the registry\'s version, then the body', () => {
  const HEARTBEAT = { select: ['GroupId', 'MemberId'] };
  // ConsumerGroupHeartbeat v0 (flexible: header v2), correlation 9, ClientId "c", no tags; body GroupId "g", MemberId "m", MemberEpoch 5, ...
  const frame = Uint8Array.from([0, 68, 0, 0, 0, 0, 0, 9, 0, 1, 0x63, 0, 2, 0x67, 2, 0x6d, 0, 0, 0, 5]);

  it('decodes what the caller selected', () => {
    const d = decodeRequest(s, frame, 0, frame.length, HEARTBEAT, frame.length + 40);
    expect([d.apiKey, d.apiVersion, d.headerVersion, d.header!.end, d.body!.complete]).toEqual([68, 0, 2, 12, true]);
    expect(plain(d.header!.value)).toEqual({ RequestApiKey: 68, RequestApiVersion: 0, CorrelationId: 9, ClientId: 'c' });
    expect(plain(d.body!.value)).toEqual({ GroupId: 'g', MemberId: 'm' });
    expect(compileDecoder(s.apis.get(68)!.request, 0, HEARTBEAT)).toBe(compileDecoder(s.apis.get(68)!.request, 0, { select: ['GroupId', 'MemberId'] }));
  });

  it('an undefined version decodes nothing; a header cut short says where', () => {
    const unknown = Uint8Array.from([0, 68, 0, 99, 0, 0, 0, 9]);
    expect(decodeRequest(s, unknown, 0, unknown.length)).toEqual({ apiKey: 68, apiVersion: 99, headerVersion: null, header: null, body: null });
    const cut = decodeRequest(s, frame, 0, 9, undefined, frame.length);
    expect([cut.header!.complete, cut.header!.stoppedAt, cut.body]).toEqual([false, 'ClientId', null]);
    expect(bodyError(() => decodeRequest(s, frame, 0, 3))).toBe('request header: needs 4 bytes, the frame has 3');
  });
});

describe('fieldPaths: selections from the schema', () => {
  it('every ErrorCode of a Produce v13 response, every topic name of a Fetch v12 request; decoding them', async () => {
    const { fieldPaths } = await import('../../src/kafka/schema/model.js');
    const produce = s.apis.get(API_KEY.Produce)!;
    expect(fieldPaths(produce.response, 13, (f) => f.name === 'ErrorCode')).toEqual(['Responses.PartitionResponses.ErrorCode']);
    expect(fieldPaths(produce.response, 2, (f) => f.name === 'ErrorCode')).toEqual(['Responses.PartitionResponses.ErrorCode']);
    expect(fieldPaths(s.apis.get(API_KEY.Fetch)!.request, 12, (f) => f.entityType === 'topicName')).toEqual(['Topics.Topic', 'ForgottenTopicsData.Topic']);
    expect(fieldPaths(s.apis.get(API_KEY.Fetch)!.response, 18, (f) => f.name === 'ErrorCode')).toEqual(['ErrorCode', 'Responses.Partitions.ErrorCode']);
    expect(fieldPaths(produce.response, 99, () => true)).toEqual([]);
    // Produce v3 response: one topic "t", partitions 0 (NONE) and 1 (NOT_LEADER_OR_FOLLOWER, 6)
    const o = new Out();
    o.int32(1);
    o.int16(1);
    o.u8(0x74);
    o.int32(2);
    for (const [p, e] of [[0, 0], [1, 6]]) {
      o.int32(p!);
      o.int16(e!);
      o.int64(-1n);
      o.int64(-1n);
    }
    o.int32(0);
    const b = o.done();
    const select = fieldPaths(produce.response, 3, (f) => f.name === 'ErrorCode');
    const d = decodeBody(s, 'response', API_KEY.Produce, 3, b, 0, b.length, { select })!;
    expect(plain(d.value)).toEqual({ Responses: [{ PartitionResponses: [{ ErrorCode: 0 }, { ErrorCode: 6 }] }] });
  });
});
