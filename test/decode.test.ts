/**
 * Issue 12's integration: bodies decoded by the schemas feed the rules (member IDs of the three group
 * protocols, error codes at every level, removed versions, malformed bodies), header v3's rules, and
 * --kafka-specs through the CLI. Captures are built byte by byte (test/builder).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync, readdirSync, copyFileSync } from 'node:fs';
import { tmpDir } from './builder/capture.js';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  apiVersionsRequestBody,
  array,
  compactArray,
  compactBytes,
  compactString,
  concat,
  consumerGroupHeartbeatRequestBody,
  errorCodeResponseBody,
  int16,
  int32,
  int64,
  int8,
  responseFrame,
  string,
  taggedFields,
  uuid,
} from './builder/kafka.js';
import { Scenario, type KafkaConn } from './builder/scenario.js';
import { analyzeScenario, brief, ID_A, ID_A_B64, ID_B, runKcid, skipUnless } from './helpers.js';
import { API_KEY } from '../src/kafka/protocol.js';

const K = API_KEY;
/** A Metadata v12 request body: Topics null, AllowAutoTopicCreation true, IncludeTopicAuthorizedOperations false, no tags. */
const metadataV12 = concat(new Uint8Array([0x00, 0x01, 0x00]), taggedFields());

function open(c: KafkaConn, id: Uint8Array | null, clientId = 'orders'): void {
  const corr = c.request({
    apiKey: K.ApiVersions,
    apiVersion: 4,
    clientId,
    clientInstanceId: id,
    body: apiVersionsRequestBody({ softwareName: 'apache-kafka-java', softwareVersion: '4.3.0' }),
  });
  // ApiVersions v4 response: ErrorCode 0, ApiKeys (compact array of 0), ThrottleTimeMs 0, no tags.
  c.respond(corr, concat(int16(0), compactArray([], int8), int32(0), taggedFields()));
}

/** The leading fields every client-chosen-member-ID heartbeat starts with (GroupId, MemberId, MemberEpoch), then a tail. */
function heartbeat(memberId: string, tail: Uint8Array): Uint8Array {
  return concat(compactString('g'), compactString(memberId), int32(5), tail);
}

describe('member-id-mismatch, each group protocol by its own schema', () => {
  const cases: [string, number, number, (m: string) => Uint8Array][] = [
    ['ConsumerGroupHeartbeat (KIP-848)', K.ConsumerGroupHeartbeat, 1, (m) => consumerGroupHeartbeatRequestBody(1, { groupId: 'g', memberId: m, memberEpoch: 5 })],
    // ShareGroupHeartbeat v1: GroupId, MemberId, MemberEpoch, RackId (null), SubscribedTopicNames (null), tags.
    ['ShareGroupHeartbeat (KIP-932)', K.ShareGroupHeartbeat, 1, (m) => heartbeat(m, concat(compactString(null), Uint8Array.of(0), taggedFields()))],
    // StreamsGroupHeartbeat v0: GroupId, MemberId, MemberEpoch, then EndpointInformationEpoch; the rest is not read.
    ['StreamsGroupHeartbeat (KIP-1071)', K.StreamsGroupHeartbeat, 0, (m) => heartbeat(m, int32(0))],
  ];
  it.each(cases)('%s: fires for another MemberId, not for the instance ID or an empty one', async (_name, apiKey, apiVersion, body) => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    open(c, ID_A);
    for (const memberId of ['not-the-id', '', ID_A_B64]) c.request({ apiKey, apiVersion, clientInstanceId: ID_A, body: body(memberId) });
    const r = await analyzeScenario(s);
    expect(brief(r.findings)).toEqual([['member-id-mismatch', 6, `MemberId "not-the-id" is not the client instance ID ${ID_A_B64}`]]);
  });
});

describe('request header v3 (KIP-1313 accepted revision)', () => {
  const accepted = { kip1313: 'accepted' as const };

  it('first request with the ID and later ones without: clean, and every request belongs to the first ID', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    open(c, ID_A);
    c.respond(c.request({ apiKey: K.Metadata, apiVersion: 12, clientInstanceId: null, body: metadataV12 }));
    const r = await analyzeScenario(s, accepted);
    expect(brief(r.findings)).toEqual([]);
    expect(r.instances.map((i) => [i.clientInstanceId, i.requests])).toEqual([[ID_A_B64, 2]]);
  });

  it('the voting revision judges the same connection by header v2: tag 0 missing on the second request', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    open(c, ID_A);
    c.respond(c.request({ apiKey: K.Metadata, apiVersion: 12, clientInstanceId: null, body: metadataV12 }));
    const r = await analyzeScenario(s);
    expect(brief(r.findings).map((f) => f[0])).toEqual(['client-instance-id-missing']);
  });

  it('fires on a first request without the ID and on a later request with it', async () => {
    const s = new Scenario();
    const a = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    open(a, null);
    const b = s.connect({ client: '10.0.0.1:50001', broker: '10.0.0.2:9092' });
    open(b, ID_B);
    b.request({ apiKey: K.Metadata, apiVersion: 12, clientInstanceId: ID_B, body: metadataV12 });
    const r = await analyzeScenario(s, accepted);
    expect(brief(r.findings)).toEqual([
      ['instance-id-missing-on-first', 4, "request header v3 without ClientInstanceId on the connection's first request"],
      ['instance-id-after-first', 11, `request header v3 carries ClientInstanceId ${'8OHSw7Sllod4aVpLPC0eDw'} on a request other than the connection's first`],
    ]);
  });

  it('without the SYN the first request seen is not judged either way', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092', handshake: false });
    c.request({ apiKey: K.Metadata, apiVersion: 12, clientInstanceId: null, body: metadataV12 });
    const d = s.connect({ client: '10.0.0.1:50001', broker: '10.0.0.2:9092', handshake: false });
    d.request({ apiKey: K.Metadata, apiVersion: 12, clientInstanceId: ID_A, body: metadataV12 });
    const r = await analyzeScenario(s, accepted);
    expect(brief(r.findings)).toEqual([]);
  });

  it('a v1 header on a v3 connection is judged by neither promise; a later v3 with the ID is', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    open(c, ID_A);
    // Metadata v8 uses request header v1 (no tagged fields: it cannot carry the ID).
    c.request({ apiKey: K.Metadata, apiVersion: 8, clientId: null, body: Uint8Array.of(0xff, 0xff, 0xff, 0xff, 1, 0, 0) });
    c.request({ apiKey: K.Metadata, apiVersion: 12, clientInstanceId: ID_A, body: metadataV12 });
    const r = await analyzeScenario(s, accepted);
    expect(brief(r.findings).map((f) => [f[0], f[1]])).toEqual([['instance-id-after-first', 7]]);
  });
});

describe('versions and bodies by the schemas', () => {
  it('a version KIP-896 removed is a note naming the range Kafka accepts and the release that removed it', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    // Produce v2: Acks -1, TimeoutMs 30000, TopicData: one topic "t" with no partitions (header v1).
    c.request({ apiKey: K.Produce, apiVersion: 2, clientId: 'old', body: concat(int16(-1), int32(30000), array(['t'], (t) => concat(string(t), int32(0)))) });
    const r = await analyzeScenario(s);
    expect(brief(r.findings)).toEqual([
      ['removed-api-version', 4, 'Produce v2 is not a version current Kafka accepts, removed in Kafka 4.0 (it accepts Produce 3-13)'],
    ]);
  });

  it('a malformed body is a warning naming the field path; framing carries on', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    open(c, ID_A);
    // ConsumerGroupHeartbeat v1 whose MemberId claims 100 bytes (compact length 101) with 2 left in the frame.
    c.request({ apiKey: K.ConsumerGroupHeartbeat, apiVersion: 1, clientInstanceId: ID_A, body: concat(compactString('g'), Uint8Array.of(101), Uint8Array.of(0x41, 0x42)) });
    c.request({ apiKey: K.Metadata, apiVersion: 12, clientInstanceId: ID_A, body: metadataV12 });
    const r = await analyzeScenario(s);
    // The cursor after MemberId's length: size 4 + header 29 (v2: key, version, correlation, ClientId null, tag 0) + GroupId 2 + length 1.
    expect(brief(r.findings)).toEqual([['malformed-body', 6, 'malformed at offset 36: ConsumerGroupHeartbeat v1 request: MemberId: length 100 overruns the frame by 98 bytes']]);
    expect(r.counts.requests).toBe(3);
  });

  it('counts every error code a response carries, per partition too; an undefined code is a note', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    open(c, ID_A);
    // Produce v9 request (flexible): TransactionalId null, Acks -1, TimeoutMs, TopicData [t [0, 1]] with null records.
    const partition = (i: number) => concat(int32(i), Uint8Array.of(0), taggedFields());
    const produce = concat(compactString(null), int16(-1), int32(30000), compactArray(['t'], (t) => concat(compactString(t), compactArray([0, 1], partition), taggedFields())), taggedFields());
    const corr = c.request({ apiKey: K.Produce, apiVersion: 9, clientInstanceId: ID_A, body: produce });
    // Produce v9 response: Responses [t: [0 NOT_LEADER_OR_FOLLOWER (6), 1 code 999]], ThrottleTimeMs.
    const answer = (i: number, code: number) =>
      concat(int32(i), int16(code), int64(-1n), int64(-1n), int64(-1n), compactArray([], int32), compactString(null), taggedFields());
    c.respond(corr, concat(compactArray(['t'], (t) => concat(compactString(t), compactArray([[0, 6], [1, 999]], ([i, e]) => answer(i!, e!)), taggedFields())), int32(0), taggedFields()));
    const r = await analyzeScenario(s);
    expect(brief(r.findings)).toEqual([['unknown-error-code', 7, 'Produce v9 response carries error code 999, which Kafka does not define']]);
    expect(r.instances.map((i) => [i.errorResponses, i.errors])).toEqual([[1, 2]]);
  });
});

describe('responses larger than the prefix kcid keeps (64 KiB)', () => {
  // Fetch v12 response: ThrottleTimeMs, ErrorCode, SessionId, Responses [t: 4 partitions of 40,000 record
  // bytes each], so partitions 2 and 3 begin past the first 64 KiB. Their codes: 0, 6, 1, 3.
  const codes = [0, 6, 1, 3];
  const records = new Uint8Array(40_000);
  const partition = (i: number) =>
    concat(int32(i), int16(codes[i]!), int64(100n), int64(100n), int64(0n), compactArray([], int8), int32(-1), compactBytes(records), taggedFields());
  const body = concat(int32(0), int16(0), int32(7), compactArray(['t'], (t) => concat(compactString(t), compactArray([0, 1, 2, 3], partition), taggedFields())), taggedFields());

  function fetchScenario(drop: (segment: number) => boolean): Scenario {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    open(c, ID_A);
    const corr = c.request({ apiKey: K.Fetch, apiVersion: 12, clientInstanceId: ID_A, body: new Uint8Array(0) });
    // The response in 1,460-byte segments, as the broker's socket would send it.
    s.add(c.tcp.serverSends(responseFrame({ correlationId: corr, headerVersion: 1, body })).filter((_, i) => !drop(i)));
    return s;
  }

  it('counts the ErrorCodes of partitions past the prefix, scanned as the segments pass', async () => {
    expect(body.length).toBeGreaterThan(3 * 40_000);
    const r = await analyzeScenario(fetchScenario(() => false));
    expect(r.instances.map((i) => [i.errorResponses, i.errors])).toEqual([[1, 3]]);
    expect(brief(r.findings)).toEqual([]);
  });

  it('counts every partition ErrorCode of random large Fetch responses cut into random segment sizes', async () => {
    let seed = 12;
    const next = (n: number) => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff), seed % n);
    for (let round = 0; round < 6; round++) {
      const n = 2 + next(12);
      const parts = Array.from({ length: n }, (_, i) => ({ i, code: next(3) === 0 ? 1 + next(100) : 0, bytes: next(3) === 0 ? 0 : next(40_000) }));
      const part = (p: (typeof parts)[number]) =>
        concat(int32(p.i), int16(p.code), int64(100n), int64(100n), int64(0n), compactArray([], int8), int32(-1), compactBytes(new Uint8Array(p.bytes)), taggedFields());
      const big = concat(int32(0), int16(0), int32(7), compactArray(['t'], (t) => concat(compactString(t), compactArray(parts, part), taggedFields())), taggedFields());
      const s = new Scenario();
      const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092', mss: 200 + next(3000) });
      open(c, ID_A);
      c.respond(c.request({ apiKey: K.Fetch, apiVersion: 12, clientInstanceId: ID_A, body: new Uint8Array(0) }), big);
      const r = await analyzeScenario(s);
      const errors = parts.filter((p) => p.code !== 0).length;
      expect([big.length, r.instances.map((i) => [i.errorResponses, i.errors])]).toEqual([big.length, [[errors > 0 ? 1 : 0, errors]]]);
    }
  });

  it('a hole in the capture past the prefix stops the scan: the codes of the prefix stand', async () => {
    // Segment 70 (bytes 102,200-103,660 of the stream) lies inside partition 2's records.
    const r = await analyzeScenario(fetchScenario((i) => i === 70));
    expect(r.instances.map((i) => [i.errorResponses, i.errors])).toEqual([[1, 1]]);
    expect(brief(r.findings).map(([rule]) => rule)).toEqual(['capture-gap']);
  });
});

describe('--kafka-specs through the CLI', () => {
  const specs = '../shared/kafka-specs/trunk-2026-08';
  const fixture = 'fixtures/kip1313-mix.pcapng';

  it('each bad path is one line and exit 2', async () => {
    const dir = tmpDir();
    const empty = join(dir, 'empty');
    mkdirSync(empty);
    const bad = join(dir, 'bad');
    mkdirSync(bad);
    writeFileSync(join(bad, 'ProduceRequest.json'), '{ "apiKey": 0, "type": "request", ');
    const notJar = join(dir, 'kafka-clients-0.jar');
    writeFileSync(notJar, 'not a zip');
    for (const [path, message] of [
      [join(dir, 'missing'), 'no such file or folder'],
      [empty, 'no Kafka request, response or header schemas there'],
      [bad, 'ProduceRequest.json'],
      [notJar, 'jar'],
    ] as const) {
      const r = await runKcid(['analyze', fixture, '--kafka-specs', path]);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr.split('\n')).toHaveLength(2);
      expect(r.stderr).toMatch(/^kcid: /);
      expect(r.stderr).toContain(message);
    }
  });

  it('a folder of Kafka schemas and a kafka-clients jar built from it give the built-in result', skipUnless(existsSync(specs), `${specs} is absent (Kafka's schemas; CI has them)`), async (ctx) => {
    const builtin = await runKcid(['analyze', fixture, '--format', 'json']);
    const folder = await runKcid(['analyze', fixture, '--format', 'json', '--kafka-specs', specs]);
    expect(folder.code).toBe(builtin.code);
    expect(folder.stdout).toBe(builtin.stdout);
    // A jar holds the schemas as common/message/*.json (zip is the Debian package; the test skips the jar without it).
    let zip = true;
    try {
      execFileSync('zip', ['-v'], { stdio: 'ignore' });
    } catch {
      zip = false;
    }
    if (!zip) return ctx.skip('zip is not installed (Debian: zip): the jar half of the test did not run');
    const dir = tmpDir();
    mkdirSync(join(dir, 'common', 'message'), { recursive: true });
    for (const f of readdirSync(specs)) if (f.endsWith('.json')) copyFileSync(join(specs, f), join(dir, 'common', 'message', f));
    execFileSync('zip', ['-q', '-r', 'kafka-clients-4.2.0.jar', 'common'], { cwd: dir });
    const jar = await runKcid(['requests', fixture, '--format', 'ndjson', '--kafka-specs', join(dir, 'kafka-clients-4.2.0.jar')]);
    const plain = await runKcid(['requests', fixture, '--format', 'ndjson']);
    expect(jar.code).toBe(0);
    expect(jar.stdout).toBe(plain.stdout);
  });
});
