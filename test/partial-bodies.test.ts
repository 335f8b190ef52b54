/**
 * Issue 27 item 5: a body that ends early keeps what it carried (fields, error codes), says where it
 * broke in `kcid show`'s words, and is a finding for responses as for requests; ApiVersions is read as the
 * version sent and only when that fails as v0, as Kafka's ApiVersionsResponse.parse does. Every message is
 * built by the test builder; the codes are Kafka's (Errors.java: 25 UNKNOWN_MEMBER_ID, 35 UNSUPPORTED_VERSION).
 */
import { describe, expect, it } from 'vitest';
import { array, compactArray, compactString, concat, int16, int32, requestFrame, taggedFields } from './builder/kafka.js';
import { Scenario } from './builder/scenario.js';
import { analyzeScenario, brief } from './helpers.js';
import { API_KEY, protocol } from '../src/kafka/protocol.js';
import { ResponseDecoder, isResponse } from '../src/kafka/response-decoder.js';
import { RequestDecoder, isRequest } from '../src/kafka/request-decoder.js';
import { bodyForm } from '../src/kafka/body-form.js';
import type { KafkaRequest, KafkaResponse } from '../src/kafka/events.js';

const K = API_KEY;
/** One ApiKeys entry: ApiKey 18 (ApiVersions), MinVersion 0, MaxVersion 3. */
const apiKey18 = concat(int16(18), int16(0), int16(3));
/** ApiVersions v0/v1 body up to ApiKeys: ErrorCode, ApiKeys [18 0-3]. */
const apiVersionsV0 = (code: number) => concat(int16(code), array([0], () => apiKey18));
/** ApiVersions v3 body: ErrorCode, ApiKeys compact [18 0-3 + tags], ThrottleTimeMs 0, no tags. */
const apiVersionsV3 = (code: number) => concat(int16(code), compactArray([0], () => concat(apiKey18, taggedFields())), int32(0), taggedFields());

/** Decodes one response frame (response header v0: CorrelationId 7, then `body`) answering key/version. */
function decode(key: number, version: number, body: Uint8Array, bodies: 'rules' | 'value' = 'rules'): KafkaResponse {
  const p = protocol();
  const d = new ResponseDecoder(p, bodyForm(p, bodies === 'rules' ? undefined : 1 << 20, bodies === 'rules' ? undefined : 'value'));
  const frame = Buffer.from(concat(int32(7), body));
  const request = { header: { apiKey: key, apiVersion: version, correlationId: 7 } } as KafkaRequest;
  const r = d.decode(frame, 0, frame.length, frame.length, 1, true, request);
  if (!isResponse(r)) throw new Error(`no response: ${r}`);
  return r;
}

describe('a response body that ends early keeps what it read', () => {
  it('ApiVersions v1 without ThrottleTimeMs: ErrorCode and ApiKeys kept, the break at the frame end (offset 20)', () => {
    // size 4 + CorrelationId 4 + ErrorCode 2 + ApiKeys count 4 + one entry 6 = 20: ThrottleTimeMs would start at 20.
    for (const form of ['rules', 'value'] as const) {
      const r = decode(K.ApiVersions, 1, apiVersionsV0(0), form);
      expect(r.bodyError).toBe('malformed at offset 20: ApiVersions v1 response: ThrottleTimeMs: needs 4 bytes, the frame has 0 left');
      expect(r.bodyTolerated).toBe('it ends before ThrottleTimeMs, as old brokers send it; kafkajs (apiVersions v1 response.js) reads ThrottleTimeMs only when four bytes are left, else takes 0');
      expect(r.errorCode).toBe(0);
      if (form === 'value') expect(JSON.stringify(r.body)).toBe('{"ErrorCode":0,"ApiKeys":[{"ApiKey":18,"MinVersion":0,"MaxVersion":3}]}');
    }
  });

  it('LeaveGroup v3 without Members: UNKNOWN_MEMBER_ID (25) is its error code, counted', () => {
    // ThrottleTimeMs 0, ErrorCode 25; Members (an int32 count, v3+) missing at offset 4 + 4 + 6 = 14.
    for (const form of ['rules', 'value'] as const) {
      const r = decode(K.LeaveGroup, 3, concat(int32(0), int16(25)), form);
      expect([r.errorCode, [...r.errorCodes], r.bodyError, r.bodyTolerated?.slice(0, 26)]).toEqual([
        25,
        [25],
        'malformed at offset 14: LeaveGroup v3 response: Members: needs 4 bytes, the frame has 0 left',
        'it ends before Members, as',
      ]);
    }
  });

  it('a break inside a field or one no client tolerates is not tolerated', () => {
    // LeaveGroup v3 whose ErrorCode is cut to one byte: nothing tolerates that.
    const cut = decode(K.LeaveGroup, 3, concat(int32(0), Uint8Array.of(0)));
    expect([cut.bodyError, cut.bodyTolerated, cut.errorCode]).toEqual(['malformed at offset 12: LeaveGroup v3 response: ErrorCode: needs 2 bytes, the frame has 1 left', undefined, null]);
    // LeaveGroup v2 has no Members: the same bytes are whole.
    const v2 = decode(K.LeaveGroup, 2, concat(int32(0), int16(25)));
    expect([v2.bodyError, v2.errorCode]).toEqual([null, 25]);
  });
});

describe('ApiVersions: the version sent first, v0 only when it fails (ApiVersionsResponse.parse)', () => {
  it('a v3 body carrying UNSUPPORTED_VERSION is read as v3, as Kafka and tshark read it', () => {
    const r = decode(K.ApiVersions, 3, apiVersionsV3(35), 'value');
    expect([r.bodyError, r.bodyTolerated, r.errorCode, JSON.stringify(r.body)]).toEqual([
      null,
      undefined,
      35,
      '{"ErrorCode":35,"ApiKeys":[{"ApiKey":18,"MinVersion":0,"MaxVersion":3}],"ThrottleTimeMs":0}',
    ]);
  });

  it('a v0 body to a v3 request fails as v3 (ApiKeys\' compact length 0 is null) and is read as v0', () => {
    for (const form of ['rules', 'value'] as const) {
      const r = decode(K.ApiVersions, 3, apiVersionsV0(35), form);
      expect([r.bodyError, r.errorCode, r.bodyLeftover]).toEqual([null, 35, undefined]);
      expect(r.bodyTolerated).toMatch(/^read as v0, as Kafka's client does, after the v3 reading failed \(ApiKeys: /);
    }
  });

  it('bytes a v0 reading leaves over are counted', () => {
    const r = decode(K.ApiVersions, 3, concat(apiVersionsV0(35), Uint8Array.of(1, 2, 3)));
    expect([r.errorCode, r.bodyLeftover]).toEqual([35, 3]);
    expect(r.bodyTolerated).toMatch(/, leaving 3 bytes over$/);
  });
});

describe('findings: malformed-body for both directions, short-response-tolerated for what clients accept', () => {
  function scenario(answer: (c: ReturnType<Scenario['connect']>) => void): Scenario {
    const s = new Scenario();
    answer(s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' }));
    return s;
  }

  it('a tolerated short response is a note; its error code counts', async () => {
    const r = await analyzeScenario(
      scenario((c) => {
        // LeaveGroup v3 request (header v1): GroupId "g", Members [] (non-flexible).
        c.respond(c.request({ apiKey: K.LeaveGroup, apiVersion: 3, clientId: 'c', body: concat(int16(1), Uint8Array.of(0x67), int32(0)) }), concat(int32(0), int16(25)));
      }),
    );
    expect(r.findings.map((f) => [f.rule, f.severity])).toEqual([['short-response-tolerated', 'info']]);
    expect(brief(r.findings)[0]![2]).toBe(
      "response to LeaveGroup v3 (correlation id 1) is short (it ends before Members, as librdkafka's mock cluster sends it; librdkafka reads only ThrottleTimeMs and ErrorCode): " +
        'malformed at offset 14: LeaveGroup v3 response: Members: needs 4 bytes, the frame has 0 left; 1 error code read (UNKNOWN_MEMBER_ID (25))',
    );
    expect(r.instances.map((i) => [i.errorResponses, i.errors])).toEqual([[1, 1]]);
  });

  it('another short response is a malformed-body warning naming the direction', async () => {
    const r = await analyzeScenario(
      scenario((c) => {
        c.respond(c.request({ apiKey: K.LeaveGroup, apiVersion: 3, clientId: 'c', body: concat(int16(1), Uint8Array.of(0x67), int32(0)) }), concat(int32(0), Uint8Array.of(0)));
      }),
    );
    expect(r.findings.map((f) => [f.rule, f.severity, f.message])).toEqual([
      ['malformed-body', 'warning', 'response to LeaveGroup v3 (correlation id 1) does not parse: malformed at offset 12: LeaveGroup v3 response: ErrorCode: needs 2 bytes, the frame has 1 left; no error code read'],
    ]);
  });

  it("librdkafka's mock answer (kcat-mock-consumer-group frame 6): read as v3 as tshark reads it, its 5 extra bytes a note", async () => {
    // tshark -d tcp.port==34795,kafka -V: Error 35, ApiKeys empty, Throttle time 1179648 (00 12 00 00), tags, then
    // "Dissected message does not end at the pdu length offset": 02 00 00 00 00 left.
    const mock = Uint8Array.of(0x00, 0x23, 0x01, 0x00, 0x12, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00);
    const d = decode(K.ApiVersions, 3, mock, 'value');
    expect([d.errorCode, JSON.stringify(d.body), d.bodyLeftover, d.bodyTolerated]).toEqual([35, '{"ErrorCode":35,"ApiKeys":[],"ThrottleTimeMs":1179648}', 5, undefined]);
    const r = await analyzeScenario(
      scenario((c) => {
        c.respond(c.request({ apiKey: K.ApiVersions, apiVersion: 3, clientId: 'c', body: concat(Uint8Array.of(2, 0x6b, 2, 0x31), taggedFields()) }), mock);
      }),
    );
    expect(r.findings.map((f) => [f.rule, f.severity, f.message])).toEqual([
      ['short-response-tolerated', 'info', "response to ApiVersions v3 (correlation id 1) leaves bytes over: 5 bytes after the body as v3 reads it, which Kafka's client ignores; 1 error code read (UNSUPPORTED_VERSION (35))"],
    ]);
  });

  it('an ApiVersions v0 fallback is silent, unless it leaves bytes over', async () => {
    const run = (tail: Uint8Array) =>
      analyzeScenario(
        scenario((c) => {
          // ApiVersions v3 request (header v2): ClientSoftwareName "k", ClientSoftwareVersion "1", no tags.
          c.respond(c.request({ apiKey: K.ApiVersions, apiVersion: 3, clientId: 'c', body: concat(Uint8Array.of(2, 0x6b, 2, 0x31), taggedFields()) }), concat(apiVersionsV0(35), tail));
        }),
      );
    expect((await run(new Uint8Array(0))).findings).toEqual([]);
    const left = await run(Uint8Array.of(9, 9));
    expect(left.findings.map((f) => [f.rule, f.message.replace(/\(ApiKeys: [^)]*\)/, '(...)')])).toEqual([
      ['malformed-body', "response to ApiVersions v3 (correlation id 1) leaves bytes over: read as v0, as Kafka's client does, after the v3 reading failed (...), leaving 2 bytes over; 1 error code read (UNSUPPORTED_VERSION (35))"],
    ]);
  });
});

describe('a request body that ends early keeps what it read', () => {
  it("ConsumerGroupHeartbeat v1 whose MemberId overruns: GroupId kept, the note says where (offset 18, the cursor after MemberId's length)", () => {
    const p = protocol();
    const notes: string[] = [];
    const d = new RequestDecoder(p, bodyForm(p, undefined, undefined), 0, { requestNote: (kind, _f, _h, m) => notes.push(`${kind}: ${m}`) });
    // Header v2 with ClientId null and no tags: 4 + 2 + 2 + 4 + 2 + 1 = 15; GroupId "g" 2 (15-16), MemberId's length (101: 100 bytes) at 17, then 2 bytes.
    const frame = Buffer.from(requestFrame({ apiKey: K.ConsumerGroupHeartbeat, apiVersion: 1, correlationId: 3, clientId: null, body: concat(compactString('g'), Uint8Array.of(101, 0x41, 0x42)) }));
    const r = d.decode(frame, 4, frame.length - 4, frame.length - 4, 1, true);
    if (!isRequest(r)) throw new Error('no request');
    expect([JSON.stringify(r.body), r.bodyError, notes]).toEqual([
      '{"GroupId":"g"}',
      'malformed at offset 18: ConsumerGroupHeartbeat v1 request: MemberId: length 100 overruns the frame by 98 bytes',
      ['malformed-body: malformed at offset 18: ConsumerGroupHeartbeat v1 request: MemberId: length 100 overruns the frame by 98 bytes'],
    ]);
  });
});
