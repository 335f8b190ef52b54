/**
 * The NDJSON row writer of `kcid requests` (src/report/requests-ndjson.ts) writes each line as text,
 * with its keys as literals. It is held here to the bytes of the form it replaced,
 * safeJson(requestJson(row)) with the bodies spliced in: on every row of every fixture (with and
 * without --bodies) and on rows made to be hard (control characters, terminal escapes, non-ASCII,
 * nulls, numbers JSON writes oddly). The cached ISO times (base/time.ts) and the byte buffer of
 * cli/output.ts are held to what they replaced too.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { analyzeInput } from '../src/analysis/run.js';
import { safeJson } from '../src/base/json-text.js';
import { isoMicros, isoMicrosByDate } from '../src/base/time.js';
import { Out } from '../src/cli/output.js';
import { requestNdjson, writeRequestNdjson } from '../src/report/requests-ndjson.js';
import { ByteText } from '../src/base/byte-text.js';
import { RequestRows, requestJson, type BodiesForm, type RequestRow } from '../src/report/requests.js';
import { readPushMetrics } from '../src/telemetry/index.js';
import { tmpDir } from './builder/capture.js';
import type { RequestObserver } from '../src/analysis/analyzer.js';
import type { KafkaRequest } from '../src/kafka/events.js';
import type { Struct } from '../src/kafka/schema/interpreter.js';
import { bodyJson } from '../src/kafka/secrets.js';

const PUBLIC = '../shared/captures/public';
import { DEFAULTS, expectSameBytes, NO_SHARED, skipUnless } from './helpers.js';
import { HAVE_SHARED, PUBLIC_CAPTURES as PUBLIC_CAPTURE_NAMES } from './real/captures.js';

/** The line as kcid wrote it before the writer: the row object serialised, then the bodies spliced in. */
function reference(row: RequestRow): string {
  const text = safeJson(requestJson(row));
  const bodies = row.bodies;
  if (bodies === undefined) return `${text}\n`;
  const truncated = [...(bodies.requestComplete ? [] : ['request']), ...(bodies.responseComplete ? [] : ['response'])];
  const telemetry = bodies.telemetry === undefined ? '' : `,"telemetry":${bodies.telemetry}`;
  return `${text.slice(0, -1)},"request":${textOf(bodies.request)}${telemetry},"response":${textOf(bodies.response)},"truncated":${JSON.stringify(truncated)}}\n`;
}

const textOf = (json: string | Uint8Array): string => (typeof json === 'string' ? json : Buffer.from(json).toString('utf8'));

async function rowsOf(file: string, bodies: BodiesForm | false, maxBodyBytes?: number): Promise<RequestRow[]> {
  const rows: RequestRow[] = [];
  const observer = new RequestRows(0, (row) => rows.push(row), bodies, bodies === false ? null : { read: readPushMetrics, maxBytes: 16 << 20 });
  const keys = file.replace(/\.pcap(ng)?$/, '.keys');
  const tlsKeylogs = readdirSync('fixtures').includes(keys.slice('fixtures/'.length)) ? [keys] : [];
  await analyzeInput(file, 0, { ...DEFAULTS, kafkaPorts: new Set([9092, 9093]), tlsKeylogs, telemetry: 'off', ...(bodies === false ? {} : { maxBodyBytes: maxBodyBytes ?? 8 << 20, bodyForm: bodies === 'json' ? 'json' : 'value' }) }, () => {}, observer);
  observer.finish();
  return rows;
}

// By name, so that without ../shared its tests are listed as skipped.
const PUBLIC_CAPTURES = PUBLIC_CAPTURE_NAMES.map((n) => join(PUBLIC, n.slice('public/'.length)));

const FIXTURES = readdirSync('fixtures')
  .filter((f) => /\.pcap(ng)?(\.gz)?$/.test(f))
  .map((f) => join('fixtures', f));

const ROW: RequestRow = {
  frame: 4,
  time: '2026-12-01T02:34:09.268335Z',
  client: '[2001:db8::1]:45988',
  broker: '10.0.0.2:9092',
  apiKey: 0,
  apiName: 'Produce',
  apiVersion: 7,
  headerVersion: 1,
  correlationId: 3,
  clientId: 'kcid-producer',
  clientInstanceId: 'ASNFZ4mrze8BI0VniavN7w',
  // Header v1 has no tagged fields: the ID is the connection's.
  headerClientInstanceId: null,
  otherTags: [],
  responseFrame: 5,
  errorCode: 0,
  errorName: 'NONE (0)',
  latencyMs: 0.043,
  input: 0,
  requestCaptured: true,
  timeUs: 1_796_092_449_268_335,
};

describe('requestNdjson', () => {
  it('writes a row with its keys in order, input counted from 1 and no timeUs', () => {
    expect(requestNdjson(ROW)).toBe(
      '{"frame":4,"time":"2026-12-01T02:34:09.268335Z","client":"[2001:db8::1]:45988","broker":"10.0.0.2:9092","apiKey":0,"apiName":"Produce",' +
        '"apiVersion":7,"headerVersion":1,"correlationId":3,"clientId":"kcid-producer","clientInstanceId":"ASNFZ4mrze8BI0VniavN7w","headerClientInstanceId":null,"otherTags":[],' +
        '"responseFrame":5,"errorCode":0,"errorName":"NONE (0)","latencyMs":0.043,"input":1,"requestCaptured":true}\n',
    );
  });

  it('escapes a hostile ClientId as safeJson does: C0 and C1 controls, DEL, quotes, bidi and zero-width characters', () => {
    const clientId = 'a"b\\c\u0000\u001b[31m\u007f\u009b\u061c\u200b\u2028\u202e\u2066\ufeff\ud800 é日本😀';
    const row = { ...ROW, clientId };
    expect(requestNdjson(row)).toBe(reference(row));
    expect(requestNdjson(row)).toContain(
      '"clientId":"a\\"b\\\\c\\u0000\\u001b[31m\\u007f\\u009b\\u061c\\u200b\\u2028\\u202e\\u2066\\ufeff\\ud800 é日本😀"',
    );
  });

  it('writes nulls, tags, odd numbers and a response without its request as JSON.stringify would', () => {
    const rows: RequestRow[] = [
      { ...ROW, apiKey: null, apiName: null, apiVersion: null, headerVersion: null, clientId: null, clientInstanceId: null, responseFrame: null, errorCode: null, errorName: null, latencyMs: null, requestCaptured: false },
      { ...ROW, otherTags: [{ tag: 1, size: 0 }, { tag: 4096, size: 70_000 }] },
      { ...ROW, frame: Number.MAX_SAFE_INTEGER, correlationId: -2_147_483_648, latencyMs: 1e21, input: 9 },
      { ...ROW, latencyMs: -0, errorCode: -1, errorName: 'UNKNOWN_SERVER_ERROR (-1)' },
      { ...ROW, latencyMs: NaN, responseFrame: Infinity },
      { ...ROW, latencyMs: 1234567.891, time: '@9000000000000000000us' },
    ];
    for (const row of rows) expect(requestNdjson(row)).toBe(reference(row));
    expect(requestNdjson(rows[1]!)).toContain('"otherTags":[{"tag":1,"size":0},{"tag":4096,"size":70000}]');
    expect(requestNdjson(rows[2]!)).toContain('"frame":9007199254740991,');
    expect(requestNdjson(rows[2]!)).toContain('"latencyMs":1e+21,"input":10,');
    expect(requestNdjson(rows[3]!)).toContain('"latencyMs":0,');
    expect(requestNdjson(rows[4]!)).toContain('"responseFrame":null,');
    expect(requestNdjson(rows[4]!)).toContain('"latencyMs":null,');
  });

  it('copies the runs rows share (endpoints, API, error) only into rows whose values are those', () => {
    // The pieces are cached by connection, by key, version and header version, and by error code:
    // a row with the same keys but other values must still be written from its own values.
    const conn: { textState: unknown } = { textState: null };
    const rows: RequestRow[] = [
      ROW,
      { ...ROW, client: '10.0.0.9:1', correlationId: 4 },
      { ...ROW, broker: 'b"roker:9092' },
      { ...ROW, apiName: 'Produce\u001b[2J' },
      { ...ROW, errorName: 'NONE (zero)' },
      { ...ROW, errorCode: 70_000, errorName: 'odd' },
      { ...ROW, apiKey: 1.5, apiVersion: -40_000, headerVersion: 7 },
      { ...ROW, apiKey: 0, apiVersion: -32_768, headerVersion: 3 },
      { ...ROW, apiKey: 32_767, apiVersion: 32_767, headerVersion: 0, apiName: 'Unknown' },
      ROW,
    ];
    for (const row of rows) {
      const out = new ByteText(16);
      writeRequestNdjson(out, row, conn);
      expect(Buffer.from(out.buf.subarray(0, out.pos)).toString('utf8')).toBe(reference(row));
    }
    expect((conn.textState as { client: string }).client).toBe(ROW.client);
  });

  it('splices the bodies in: request, telemetry, response, then which were cut', () => {
    const bodies = { request: '{"acks":-1,"timeoutMs":30000}', response: 'null', requestComplete: true, responseComplete: true, summary: '', errors: '' };
    const cases: [RequestRow, string][] = [
      [{ ...ROW, bodies }, ',"request":{"acks":-1,"timeoutMs":30000},"response":null,"truncated":[]}\n'],
      [{ ...ROW, bodies: { ...bodies, requestComplete: false } }, ',"response":null,"truncated":["request"]}\n'],
      [{ ...ROW, bodies: { ...bodies, responseComplete: false } }, ',"response":null,"truncated":["response"]}\n'],
      [{ ...ROW, bodies: { ...bodies, requestComplete: false, responseComplete: false } }, ',"truncated":["request","response"]}\n'],
      [{ ...ROW, bodies: { ...bodies, request: '{}', telemetry: '{"compression":"none"}' } }, ',"request":{},"telemetry":{"compression":"none"},"response":null,"truncated":[]}\n'],
    ];
    for (const [row, end] of cases) {
      expect(requestNdjson(row)).toBe(reference(row));
      expect(requestNdjson(row).endsWith(end)).toBe(true);
    }
  });

  const sameCodes = async (file: string): Promise<void> => {
    // --bodies' JSON keeps each repeated response's error-code scan with its JSON (kafka/json-memo.ts):
    // every response's codes must be what the selective decode and the scan read without it.
    const codesOf = async (form: 'json' | undefined) => {
      const codes: string[] = [];
      const observer: RequestObserver = { response: (_s, r) => void codes.push(`${r.frame} ${r.errorCode} ${r.errorCodes.join(',')}`) };
      const keys = file.replace(/\.pcap(ng)?$/, '.keys');
      const tlsKeylogs = existsSync(keys) ? [keys] : [];
      await analyzeInput(file, 0, { ...DEFAULTS, kafkaPorts: new Set([9092, 9093]), tlsKeylogs, telemetry: 'off', ...(form === undefined ? {} : { maxBodyBytes: 8 << 20, bodyForm: form }) }, () => {}, observer);
      return codes;
    };
    const plain = await codesOf(undefined);
    // Twice: the second run finds every body of the first in the memo.
    expect(await codesOf('json')).toEqual(plain);
    expect(await codesOf('json')).toEqual(plain);
  };
  it.each(FIXTURES)('reads the same error codes from the responses of %s whether their JSON is written or remembered', sameCodes);
  it.each(PUBLIC_CAPTURES)('reads the same error codes from the responses of %s whether their JSON is written or remembered', skipUnless(HAVE_SHARED, NO_SHARED), sameCodes);

  it.each(FIXTURES)('writes every row of %s as before, with and without bodies', async (file) => {
    let rows = 0;
    for (const [form, max] of [[false, undefined], ['json', undefined], ['json', 100]] as const) {
      for (const row of await rowsOf(file, form, max)) {
        expect(requestNdjson(row)).toBe(reference(row));
        rows++;
      }
    }
    expect(rows).toBeGreaterThan(0);
  });

  it('leaves the JSON out of table rows and the summary out of NDJSON rows', async () => {
    const produce = (rows: RequestRow[]) => rows.find((r) => r.apiName === 'Produce')!.bodies!;
    const json = produce(await rowsOf('fixtures/kcat-mock-produce.pcap', 'json'));
    const summary = produce(await rowsOf('fixtures/kcat-mock-produce.pcap', 'summary'));
    expect(json).toMatchObject({ summary: '', errors: '' });
    expect(textOf(json.request).startsWith('{"transactionalId":null,"acks":-1,')).toBe(true);
    expect(summary).toMatchObject({ request: '', response: '', summary: 'kcid-fixture[1]' });
  });
});

/**
 * Each body's JSON as --bodies wrote it before the Kafka stage wrote it from the wire: every field
 * decoded into a value (bodyForm 'value'), then the value written (secrets.ts bodyJson). Keyed by the
 * request's frame and correlation id; the response's under the same key.
 */
async function valueJson(file: string, maxBodyBytes: number): Promise<Map<string, { request: string; response: string; requestComplete: boolean; responseComplete: boolean }>> {
  const out = new Map<string, { request: string; response: string; requestComplete: boolean; responseComplete: boolean }>();
  const key = (r: KafkaRequest) => `${r.frame}/${r.header.correlationId}`;
  const text = (kind: 'request' | 'response', r: KafkaRequest, body: Struct | null) => (body === null ? 'null' : bodyJson(kind, r.header.apiKey, r.header.apiVersion, body));
  const observer: RequestObserver = {
    request: (_s, r) => void out.set(key(r), { request: text('request', r, r.body), response: 'null', requestComplete: r.bodyComplete, responseComplete: true }),
    response: (_s, r) => {
      const e = r.request === null ? undefined : out.get(key(r.request));
      if (e === undefined) return;
      e.response = text('response', r.request!, r.body);
      e.responseComplete = r.bodyComplete;
    },
  };
  const keys = file.replace(/\.pcap(ng)?$/, '.keys');
  const tlsKeylogs = file.startsWith('fixtures/') && readdirSync('fixtures').includes(keys.slice('fixtures/'.length)) ? [keys] : [];
  await analyzeInput(file, 0, { ...DEFAULTS, kafkaPorts: new Set([9092, 9093]), tlsKeylogs, telemetry: 'off', maxBodyBytes, bodyForm: 'value' }, () => {}, observer);
  return out;
}

describe('the bodies as JSON from the Kafka stage (bodyForm json)', () => {
  const asDecoded = async (file: string): Promise<void> => {
    let bodies = 0;
    for (const max of [8 << 20, 100]) {
      const want = await valueJson(file, max);
      for (const row of await rowsOf(file, 'json', max)) {
        if (!row.requestCaptured) continue;
        const w = want.get(`${row.frame}/${row.correlationId}`)!;
        expect([textOf(row.bodies!.request), textOf(row.bodies!.response)]).toEqual([w.request, w.response]);
        expect(row.bodies!.requestComplete).toBe(w.requestComplete && row.bodies!.requestComplete);
        bodies++;
      }
    }
    expect(bodies).toBeGreaterThan(0);
  };
  it.each(FIXTURES)('are what the decoded values wrote, whole and cut to 100 bytes: %s', asDecoded);
  it.each(PUBLIC_CAPTURES)('are what the decoded values wrote, whole and cut to 100 bytes: %s', skipUnless(HAVE_SHARED, NO_SHARED), asDecoded);
});

describe('rows without judging (judge: false, as kcid requests runs)', () => {
  it.each(FIXTURES)('are the rows of a judged analysis, with no finding made and no connection summarised: %s', async (file) => {
    const run = async (judge: boolean) => {
      const lines: string[] = [];
      const observer = new RequestRows(0, (row) => lines.push(requestNdjson(row)));
      const result = await analyzeInput(file, 0, { ...DEFAULTS, kafkaPorts: new Set([9092, 9093]), telemetry: 'off', judge }, () => {}, observer);
      observer.finish();
      return { lines, findings: result.findings.length, connections: result.connections.length };
    };
    const judged = await run(true);
    const rows = await run(false);
    expect(rows.lines).toEqual(judged.lines);
    expect([rows.findings, rows.connections]).toEqual([0, 0]);
    expect(judged.connections).toBeGreaterThan(0);
  });
});

describe('isoMicros', () => {
  it('gives what Date gives, second by second and across seconds, days and years', () => {
    const starts = [0, 1_796_092_449_268_335, 1_796_092_449_999_998, 253_402_300_799_999_000, -1, -62_135_596_800_000_000, -62_167_219_200_000_001];
    for (const start of starts) {
      for (let i = 0; i < 2000; i++) {
        const us = start + i * 997;
        expect(isoMicros(us)).toBe(isoMicrosByDate(us));
      }
    }
    expect(isoMicros(1_796_092_449_268_335)).toBe('2026-12-01T02:34:09.268335Z');
    expect(isoMicros(1_796_092_449_000_007)).toBe('2026-12-01T02:34:09.000007Z');
    expect(isoMicros(-1)).toBe('1969-12-31T23:59:59.999999Z');
  });

  it('gives Date\'s text for times outside plain ISO: expanded years, fractions of a µs, times Date cannot hold', () => {
    for (const us of [253_402_300_800_000_000, 253_402_300_800_000_001, 1_796_092_449_268_335.5, -62_198_755_200_000_000, 9e18, -9e18, NaN, Infinity]) {
      isoMicros(us - 1);
      expect(isoMicros(us)).toBe(isoMicrosByDate(us));
    }
    expect(isoMicros(253_402_300_800_000_000)).toBe('+010000-01-01T00:00:00.000000Z'); // the expanded year, six digits (issue 27.13)
    expect(isoMicros(9e18)).toBe('@9000000000000000000us');
  });
});

describe('Out into a file', () => {
  it('writes the same bytes whatever the sizes of the writes: multi-byte text across chunks, and one write larger than a chunk', () => {
    const file = join(tmpDir(), 'out.txt');
    const out = new Out({ write: () => true }, file);
    const pieces: string[] = [];
    for (let i = 0; i < 30_000; i++) pieces.push(i % 7 === 0 ? `é日本😀${i}\n` : `{"row":${i},"text":"${'x'.repeat(i % 50)}"}\n`);
    pieces.push('y'.repeat(1_000_000), '\ud800 lone\n');
    for (const p of pieces) out.write(p);
    out.close();
    expectSameBytes(readFileSync(file), Buffer.from(pieces.join(''), 'utf8'));
  });
});
