/**
 * The registry: header versions as data (Kafka's rule, headerVersions maps, the accepted revision's v3),
 * the KIP-1313 overlay, names and error labels, and --kafka-specs from a folder, a jar built here, and
 * every bad path.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { skipUnless } from '../helpers.js';
import { decodeRequestHeader } from '../../src/kafka/schema/interpreter.js';
import { formatVersions, layoutFor, SchemaError } from '../../src/kafka/schema/model.js';
import { ACCEPTED_REVISION } from '../../src/kafka/schema/overlay.js';
import {
  API_KEY,
  apiName,
  builtinSchemas,
  errorLabel,
  errorName,
  isDefinedVersion,
  isFlexible,
  isValidVersion,
  loadSchemas,
  requestHeaderVersion,
  responseHeaderVersion,
  withHeaderVersions,
} from '../../src/kafka/schema/registry.js';
import { buildZip } from './zip-builder.js';

const s = builtinSchemas();
const SPECS = resolve(__dirname, '../../../shared/kafka-specs/trunk-2026-08');
const tmp = mkdtempSync(join(tmpdir(), 'kcid-specs-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const names = (fields: readonly { name: string }[]) => fields.map((f) => f.name);

describe('header versions', () => {
  it('Kafka\'s rule: flexible 2/1, else 1/0; ControlledShutdown v0 request header 0; ApiVersions responses 0', () => {
    const table = (key: number, versions: number[]) => versions.map((v) => `${v}:${requestHeaderVersion(s, key, v)}/${responseHeaderVersion(s, key, v)}`).join(' ');
    expect(table(API_KEY.Produce, [0, 2, 3, 8, 9, 13, 14])).toBe('0:1/0 2:1/0 3:1/0 8:1/0 9:2/1 13:2/1 14:null/null');
    expect(table(API_KEY.ApiVersions, [0, 2, 3, 5])).toBe('0:1/0 2:1/0 3:2/0 5:2/0');
    expect(table(API_KEY.ControlledShutdown, [0, 1, 2, 3])).toBe('0:0/0 1:1/0 2:1/0 3:2/1');
    expect(table(API_KEY.Fetch, [0, 3, 11, 12, 18])).toBe('0:1/0 3:1/0 11:1/0 12:2/1 18:2/1');
    expect(table(API_KEY.GetTelemetrySubscriptions, [0, 1, 2])).toBe('0:2/1 1:2/1 2:null/null');
    expect(requestHeaderVersion(s, 9999, 0)).toBe(null);
    expect(requestHeaderVersion(s, -1, 0)).toBe(null);
  });

  it('the accepted revision as data: every header-v2 request uses header v3, the others keep theirs', () => {
    const a = withHeaderVersions(s, ACCEPTED_REVISION, 'accepted');
    expect([0, 8, 9, 13].map((v) => requestHeaderVersion(a, API_KEY.Produce, v))).toEqual([1, 1, 3, 3]);
    expect(requestHeaderVersion(a, API_KEY.ControlledShutdown, 0)).toBe(0);
    expect(responseHeaderVersion(a, API_KEY.Produce, 9)).toBe(1);
    expect(a.apis.get(API_KEY.Produce)!.request.headerVersions!.map((r) => `${formatVersions(r.versions)}:${r.header}`)).toEqual(['0-8:1', '9-13:3']);
    expect(requestHeaderVersion(s, API_KEY.Produce, 9)).toBe(2); // the original is unchanged
  });
});

describe('the KIP-1313 overlay', () => {
  it('request header: v2 gains tag 0 ClientInstanceId; v3 is flexible with the int16 ClientId and tag 0; v0 (removed in 4.0) stays', () => {
    const h = s.requestHeader;
    expect(formatVersions(h.validVersions)).toBe('1-3');
    expect(formatVersions(h.definedVersions)).toBe('0-3');
    expect(names(layoutFor(h, 0)!.fields)).toEqual(['RequestApiKey', 'RequestApiVersion', 'CorrelationId']);
    const v3 = layoutFor(h, 3)!;
    expect(formatVersions(v3.flexibleVersions)).toBe('2+');
    const id = v3.fields.find((f) => f.name === 'ClientInstanceId')!;
    expect([id.type, id.tag, formatVersions(id.taggedVersions), formatVersions(id.versions)]).toEqual(['uuid', 0, '2+', '2+']);
    const clientId = v3.fields.find((f) => f.name === 'ClientId')!;
    expect([formatVersions(clientId.flexibleVersions ?? null), formatVersions(clientId.nullableVersions)]).toEqual(['none', '1+']);
  });

  it('header v2 and v3 bytes: ClientId with an int16 length, tag 0 with 16 bytes', () => {
    // api key 3, version 12, correlation 7, ClientId "ab", one tagged field: tag 0, size 16, the UUID
    const bytes = Uint8Array.from([0, 3, 0, 12, 0, 0, 0, 7, 0, 2, 0x61, 0x62, 1, 0, 16, ...Array.from({ length: 16 }, (_, i) => i + 1)]);
    for (const v of [2, 3]) {
      const d = decodeRequestHeader(s, v, bytes, 0, bytes.length)!;
      expect(d.end).toBe(bytes.length);
      expect({ ...d.value }).toEqual({ RequestApiKey: 3, RequestApiVersion: 12, CorrelationId: 7, ClientId: 'ab', ClientInstanceId: Uint8Array.from({ length: 16 }, (_, i) => i + 1) });
    }
    // v3's later requests: null ClientId, no tags.
    const later = Uint8Array.from([0, 3, 0, 12, 0, 0, 0, 8, 0xff, 0xff, 0]);
    expect({ ...decodeRequestHeader(s, 3, later, 0, later.length)!.value }).toEqual({ RequestApiKey: 3, RequestApiVersion: 12, CorrelationId: 8, ClientId: null });
  });

  it('GetTelemetrySubscriptions v1 and PushTelemetry v1 without ClientInstanceId (request and GetTelemetrySubscriptions response)', () => {
    const g = s.apis.get(API_KEY.GetTelemetrySubscriptions)!;
    const p = s.apis.get(API_KEY.PushTelemetry)!;
    expect([formatVersions(g.validVersions), formatVersions(p.validVersions)]).toEqual(['0-1', '0-1']);
    const at = (m: typeof g.request, v: number) => names(layoutFor(m, v)!.fields.filter((f) => f.versions && v >= f.versions.lo && v <= f.versions.hi));
    expect(at(g.request, 0)).toEqual(['ClientInstanceId']);
    expect(at(g.request, 1)).toEqual([]);
    expect(at(g.response, 0)).toContain('ClientInstanceId');
    expect(at(g.response, 1)).toEqual(['ThrottleTimeMs', 'ErrorCode', 'SubscriptionId', 'AcceptedCompressionTypes', 'PushIntervalMs', 'TelemetryMaxBytes', 'DeltaTemporality', 'RequestedMetrics']);
    expect(at(p.request, 1)).toEqual(['SubscriptionId', 'Terminating', 'CompressionType', 'Metrics']);
    expect(at(p.response, 1)).toEqual(['ThrottleTimeMs', 'ErrorCode']);
  });
});

describe('names, versions, errors', () => {
  it('answers from the schemas', () => {
    expect([apiName(s, 0), apiName(s, 74), apiName(s, 94), apiName(s, 95)]).toEqual(['Produce', 'ListConfigResources', 'UnregisterController', null]);
    expect([isValidVersion(s, 0, 2), isDefinedVersion(s, 0, 2), isValidVersion(s, 0, 3), isDefinedVersion(s, 0, 14)]).toEqual([false, true, true, false]);
    expect([isFlexible(s, 0, 8), isFlexible(s, 0, 9), isFlexible(s, 4, 4), isFlexible(s, 4, 3)]).toEqual([false, true, true, false]);
    expect([errorName(35), errorLabel(35), errorLabel(0), errorLabel(-1), errorName(137), errorLabel(137)]).toEqual([
      'UNSUPPORTED_VERSION',
      'UNSUPPORTED_VERSION (35)',
      'NONE (0)',
      'UNKNOWN_SERVER_ERROR (-1)',
      null,
      'UNKNOWN_ERROR_CODE (137)',
    ]);
    expect(API_KEY.StreamsGroupHeartbeat).toBe(88);
  });
});

const HEADER = (validVersions: string, extra = '') => `// a comment, "with quotes" // and slashes
{ "type": "header", "name": "RequestHeader", "validVersions": "${validVersions}", "flexibleVersions": "2+",
  "fields": [
    { "name": "RequestApiKey", "type": "int16", "versions": "0+" },
    { "name": "RequestApiVersion", "type": "int16", "versions": "0+" },
    { "name": "CorrelationId", "type": "int32", "versions": "0+" },
    { "name": "ClientId", "type": "string", "versions": "1+", "nullableVersions": "1+", "flexibleVersions": "none", "about": "http://x//y" }${extra}
  ] }`;
const RESPONSE_HEADER = '{ "type": "header", "name": "ResponseHeader", "validVersions": "0-1", "flexibleVersions": "1+", "fields": [ { "name": "CorrelationId", "type": "int32", "versions": "0+" } ] }';
const API = (headerVersions = '') => `{ "apiKey": 18, "type": "request", "name": "ApiVersionsRequest", "validVersions": "0-4", "flexibleVersions": "3+", ${headerVersions}
  "fields": [ { "name": "ClientSoftwareName", "type": "string", "versions": "3+" } ] }`;
const API_RESPONSE = '{ "apiKey": 18, "type": "response", "name": "ApiVersionsResponse", "validVersions": "0-4", "flexibleVersions": "3+", "fields": [ { "name": "ErrorCode", "type": "int16", "versions": "0+" } ] }';

function folder(name: string, files: Record<string, string>): string {
  const dir = join(tmp, name);
  mkdirSync(dir);
  for (const [n, t] of Object.entries(files)) writeFileSync(join(dir, n), t);
  return dir;
}

function loadError(path: string): string {
  try {
    loadSchemas(path);
  } catch (e) {
    expect(e).toBeInstanceOf(SchemaError);
    return (e as Error).message;
  }
  throw new Error('loaded');
}

describe('--kafka-specs', () => {
  it('a folder: Kafka\'s files with comments, the overlay on top, a headerVersions map read as data', () => {
    const dir = folder('mini', {
      'RequestHeader.json': HEADER('1-2'),
      'ResponseHeader.json': RESPONSE_HEADER,
      'ApiVersionsRequest.json': API('"headerVersions": {"0-2": "1", "3": "2", "4+": "3"},'),
      'ApiVersionsResponse.json': API_RESPONSE,
      'README.md': 'not json',
    });
    const m = loadSchemas(dir);
    expect(m.source).toBe('--kafka-specs mini; KIP-1313 overlay (src/kafka/schema/overlay.ts)');
    expect([...m.apis.keys()]).toEqual([18]);
    expect(formatVersions(m.requestHeader.validVersions)).toBe('1-3'); // the overlay's header
    expect([0, 2, 3, 4, 5].map((v) => requestHeaderVersion(m, 18, v))).toEqual([1, 1, 2, 3, null]);
    expect(m.errors.get(35)!.name).toBe('UNSUPPORTED_VERSION'); // the built-in error table
  });

  it('a RequestHeader that defines v3 replaces the overlay\'s', () => {
    const dir = folder('v3', {
      'RequestHeader.json': HEADER('1-3', ', { "name": "Extra", "type": "int8", "versions": "3+" }'),
      'ResponseHeader.json': RESPONSE_HEADER,
      'ApiVersionsRequest.json': API(),
      'ApiVersionsResponse.json': API_RESPONSE,
    });
    expect(names(layoutFor(loadSchemas(dir).requestHeader, 3)!.fields)).toEqual(['RequestApiKey', 'RequestApiVersion', 'CorrelationId', 'ClientId', 'Extra']);
  });

  it('Kafka\'s own folder, and the same files in a jar built here, give the built-in schemas of every valid version', skipUnless(existsSync(SPECS), '../shared/kafka-specs is absent (Kafka\'s schemas; CI has them)'), () => {
    const files = readdirSync(SPECS).filter((n) => n.endsWith('.json'));
    const jar = join(tmp, 'kafka-clients-4.2.0.jar');
    writeFileSync(
      jar,
      buildZip([
        { name: 'META-INF/MANIFEST.MF', data: Buffer.from('Manifest-Version: 1.0\n'), store: true },
        ...files.map((n, i) => ({ name: `common/message/${n}`, data: readFileSync(join(SPECS, n)), store: i % 7 === 0 })),
        { name: 'org/apache/kafka/common/Uuid.class', data: Buffer.from([0xca, 0xfe, 0xba, 0xbe]) },
      ]),
    );
    for (const m of [loadSchemas(SPECS), loadSchemas(jar)]) {
      expect(m.apis.size).toBe(95);
      for (const [key, api] of m.apis) {
        const b = s.apis.get(key)!;
        expect([api.name, formatVersions(api.validVersions), api.removed]).toEqual([b.name, formatVersions(b.validVersions), null]);
        if (b.validVersions) {
          expect(layoutFor(api.request, b.validVersions.hi)).toEqual(layoutFor(b.request, b.validVersions.hi));
          expect(layoutFor(api.response, b.validVersions.hi)).toEqual(layoutFor(b.response, b.validVersions.hi));
        }
      }
      expect(formatVersions(m.requestHeader.validVersions)).toBe('1-3');
    }
    expect(loadSchemas(jar).source).toBe('--kafka-specs kafka-clients-4.2.0.jar; KIP-1313 overlay (src/kafka/schema/overlay.ts)');
  });

  it('each bad path is one SchemaError line', () => {
    expect(loadError(join(tmp, 'nope'))).toBe(`--kafka-specs ${join(tmp, 'nope')}: no such file or folder`);
    const empty = folder('empty', { 'notes.txt': 'x' });
    expect(loadError(empty)).toBe(`--kafka-specs ${empty}: no Kafka request, response or header schemas there`);
    const data = folder('data', { 'Rec.json': '{"type": "data", "name": "Rec", "validVersions": "0", "fields": []}' });
    expect(loadError(data)).toBe(`--kafka-specs ${data}: no Kafka request, response or header schemas there`);
    const bad = folder('bad', { 'ApiVersionsRequest.json': '{ "apiKey": 18, "type": "request", // comment\n "name": }' });
    expect(loadError(bad)).toMatch(new RegExp(`^--kafka-specs ${join(bad, 'ApiVersionsRequest.json')}: not valid JSON: Unexpected token`));
    const badType = folder('badtype', {
      'RequestHeader.json': HEADER('1-2'),
      'ResponseHeader.json': RESPONSE_HEADER,
      'ApiVersionsRequest.json': API().replace('"string"', '"int128"'),
      'ApiVersionsResponse.json': API_RESPONSE,
    });
    expect(loadError(badType)).toBe(`--kafka-specs ${badType}: ApiVersionsRequest.ClientSoftwareName: unknown type "int128"`);
    const proto = folder('proto', {
      'RequestHeader.json': HEADER('1-2'),
      'ResponseHeader.json': RESPONSE_HEADER,
      'ApiVersionsRequest.json': API().replace('"ClientSoftwareName"', '"__proto__"'),
      'ApiVersionsResponse.json': API_RESPONSE,
    });
    expect(loadError(proto)).toBe(`--kafka-specs ${proto}: ApiVersionsRequest: a field without a plain name ("__proto__")`);
    const noResponse = folder('noresponse', { 'RequestHeader.json': HEADER('1-2'), 'ResponseHeader.json': RESPONSE_HEADER, 'ApiVersionsRequest.json': API() });
    expect(loadError(noResponse)).toBe(`--kafka-specs ${noResponse}: ApiVersionsRequest has no response schema`);
    const jar = join(tmp, 'other.jar');
    writeFileSync(jar, buildZip([{ name: 'META-INF/MANIFEST.MF', data: Buffer.from('Manifest-Version: 1.0\n') }]));
    expect(loadError(jar)).toBe(`--kafka-specs ${jar}: no common/message/*.json in this jar`);
    const notZip = join(tmp, 'not.jar');
    writeFileSync(notZip, 'hello, not a zip at all');
    expect(loadError(notZip)).toBe(`--kafka-specs ${notZip}: not a readable jar (no end of central directory record)`);
    const cut = join(tmp, 'cut.jar');
    const whole = buildZip([{ name: 'common/message/A.json', data: Buffer.from(API()) }]);
    const broken = Buffer.from(whole);
    broken.writeUInt32LE(0x7fffffff, broken.length - 6); // central directory offset far past the end
    writeFileSync(cut, broken);
    expect(loadError(cut)).toBe(`--kafka-specs ${cut}: not a readable jar (central directory outside the file)`);
  });
});

describe('--kafka-specs that Kafka\'s generator would not accept are refused at load (issue 26 item 9)', () => {
  /** ApiVersionsRequest v3+ with `fields` and `structs` as given; the header and response as above. */
  const withFields = (name: string, fields: string, structs = '') =>
    folder(name, {
      'RequestHeader.json': HEADER('1-2'),
      'ResponseHeader.json': RESPONSE_HEADER,
      'ApiVersionsRequest.json': `{ "apiKey": 18, "type": "request", "name": "ApiVersionsRequest", "validVersions": "0-4", "flexibleVersions": "3+", "fields": [ ${fields} ]${structs ? `, "commonStructs": [ ${structs} ]` : ''} }`,
      'ApiVersionsResponse.json': API_RESPONSE,
    });

  it('tags not contiguous from 0 (StructSpec: "the tag IDs are not contiguous"): eight tags near 2^31, one tag 1 without 0', () => {
    const tagged = Array.from({ length: 8 }, (_, i) => `{ "name": "T${i}", "type": "int32", "versions": "3+", "taggedVersions": "3+", "tag": ${2147483640 + i} }`).join(', ');
    const near = withFields('tags-2-31', tagged);
    expect(loadError(near)).toBe(`--kafka-specs ${near}: ApiVersionsRequest: tags are not contiguous from 0 (2147483647 is used, 0 is not), as Kafka's generator requires`);
    const gap = withFields('tags-gap', '{ "name": "A", "type": "int32", "versions": "3+", "taggedVersions": "3+", "tag": 1 }');
    expect(loadError(gap)).toBe(`--kafka-specs ${gap}: ApiVersionsRequest: tags are not contiguous from 0 (1 is used, 0 is not), as Kafka's generator requires`);
    const ok = withFields('tags-ok', '{ "name": "A", "type": "int32", "versions": "3+", "taggedVersions": "3+", "tag": 1 }, { "name": "B", "type": "int8", "versions": "3+", "taggedVersions": "3+", "tag": 0 }');
    expect(loadSchemas(ok).apis.get(18)!.request.layouts.at(-1)!.fields.map((f) => f.tag)).toEqual([1, 0]);
  });

  it('versions beyond int16 or negative (Versions.parse: Short.parseShort, "Invalid version range")', () => {
    const big = withFields('v-big', '{ "name": "A", "type": "int32", "versions": "32768+" }');
    expect(loadError(big)).toBe(`--kafka-specs ${big}: ApiVersionsRequest.A.versions: bad version range "32768+"`);
    const negative = withFields('v-neg', '{ "name": "A", "type": "int32", "versions": "-1+" }');
    expect(loadError(negative)).toBe(`--kafka-specs ${negative}: ApiVersionsRequest.A.versions: bad version range "-1+"`);
  });

  it('a common struct that contains itself, or two that contain each other', () => {
    const self = withFields('self', '{ "name": "Node", "type": "Tree", "versions": "0+" }', '{ "name": "Tree", "versions": "0+", "fields": [ { "name": "Kids", "type": "[]Tree", "versions": "0+" } ] }');
    expect(loadError(self)).toBe(`--kafka-specs ${self}: ApiVersionsRequest.Tree.Kids: common struct Tree contains itself (Tree -> Tree)`);
    const mutual = withFields(
      'mutual',
      '{ "name": "Start", "type": "A", "versions": "0+" }',
      '{ "name": "A", "versions": "0+", "fields": [ { "name": "ToB", "type": "B", "versions": "0+" } ] }, { "name": "B", "versions": "0+", "fields": [ { "name": "ToA", "type": "[]A", "versions": "0+" } ] }',
    );
    expect(loadError(mutual)).toBe(`--kafka-specs ${mutual}: ApiVersionsRequest.B.ToA: common struct A contains itself (A -> B -> A)`);
    // The same struct used twice (no cycle) still loads, as Kafka's own schemas do.
    const twice = withFields('twice', '{ "name": "X", "type": "A", "versions": "0+" }, { "name": "Y", "type": "[]A", "versions": "0+" }', '{ "name": "A", "versions": "0+", "fields": [ { "name": "V", "type": "int8", "versions": "0+" } ] }');
    expect(loadSchemas(twice).apis.get(18)!.request.layouts.at(-1)!.fields.map((f) => f.struct!.name)).toEqual(['A', 'A']);
  });

  it('symbolic links that loop: a file in the folder, and the folder itself', () => {
    const dir = folder('loop', { 'RequestHeader.json': HEADER('1-2') });
    symlinkSync(join(dir, 'B.json'), join(dir, 'A.json'));
    symlinkSync(join(dir, 'A.json'), join(dir, 'B.json'));
    expect(loadError(dir)).toBe(`--kafka-specs ${join(dir, 'A.json')}: symbolic links loop`);
    const self = join(tmp, 'self-link');
    symlinkSync(self, self);
    expect(loadError(self)).toBe(`--kafka-specs ${self}: symbolic links loop`);
  });
});
