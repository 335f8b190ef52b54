/**
 * Checks kcid's API table against Apache Kafka's message schemas when ../shared/kafka-message-specs exists
 * (the JSON files with // comments from clients/src/main/resources/common/message); skipped otherwise.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ALL_APIS, apiInfo, apiName, errorCodeOffset, isFlexible, isValidVersion, parseVersionRange } from '../src/kafka/apis.js';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..');
const specDir = join(repoRoot, '..', 'shared', 'kafka-message-specs');

interface Field {
  name: string;
  type: string;
  versions: string;
  taggedVersions?: string;
}

interface Message {
  apiKey?: number;
  type: string;
  name: string;
  validVersions: string;
  flexibleVersions: string;
  fields: Field[];
}

/** Drops // comments outside strings (the schema files are JSON with comments). */
function stripComments(text: string): string {
  return text
    .split('\n')
    .map((line) => {
      let inString = false;
      for (let i = 0; i < line.length; i++) {
        const c = line[i];
        if (c === '"' && line[i - 1] !== '\\') inString = !inString;
        else if (!inString && c === '/' && line[i + 1] === '/') return line.slice(0, i);
      }
      return line;
    })
    .join('\n');
}

function load(file: string): Message {
  return JSON.parse(stripComments(readFileSync(join(specDir, file), 'utf8'))) as Message;
}

/** A schema version range without the code under test: [min, max] or null for 'none'. */
function range(text: string | undefined): [number, number] | null {
  if (text === undefined || text === 'none') return null;
  const plus = /^(\d+)\+$/.exec(text);
  if (plus) return [Number(plus[1]), Number.MAX_SAFE_INTEGER];
  const [a, b] = text.split('-').map(Number);
  return [a!, b ?? a!];
}

const contains = (r: [number, number] | null, v: number): boolean => r !== null && v >= r[0] && v <= r[1];

const FIXED_SIZE = new Map([
  ['bool', 1],
  ['int8', 1],
  ['int16', 2],
  ['uint16', 2],
  ['int32', 4],
  ['uint32', 4],
  ['int64', 8],
  ['float64', 8],
  ['uuid', 16],
]);

/**
 * Offset of the top-level ErrorCode in a response body version: the sum of the fixed sizes of the fields
 * before it, or null when one of them is variable-size or the version has no ErrorCode. Tagged fields are
 * written after all the others and take no place in this order.
 */
function errorCodeOffsetFromSchema(response: Message, version: number): number | null {
  let offset = 0;
  for (const f of response.fields) {
    if (!contains(range(f.versions), version)) continue;
    if (contains(range(f.taggedVersions), version)) continue;
    if (f.name === 'ErrorCode') return offset;
    const size = FIXED_SIZE.get(f.type);
    if (size === undefined) return null;
    offset += size;
  }
  return null;
}

interface Expected {
  key: number;
  name: string;
  minVersion: number;
  maxVersion: number;
  firstFlexibleVersion: number | null;
  errorCodeOffsets: (number | null)[];
}

/** KIP-1313: v1 of GetTelemetrySubscriptions and PushTelemetry, whose responses keep ErrorCode at byte 4. */
const KIP_1313_DELTAS = new Map<number, (e: Expected) => void>([
  [71, (e) => ((e.maxVersion = 1), e.errorCodeOffsets.push(4))],
  [72, (e) => ((e.maxVersion = 1), e.errorCodeOffsets.push(4))],
]);

function expectedFromSchemas(): Expected[] {
  const out: Expected[] = [];
  for (const file of readdirSync(specDir).filter((f) => f.endsWith('Request.json'))) {
    const request = load(file);
    if (request.type !== 'request') continue;
    const response = load(file.replace(/Request\.json$/, 'Response.json'));
    expect(response.type).toBe('response');
    expect(response.apiKey).toBe(request.apiKey);
    const valid = range(request.validVersions)!;
    const flexible = range(request.flexibleVersions);
    const errorCodeOffsets: (number | null)[] = [];
    for (let v = 0; v <= valid[1]; v++) errorCodeOffsets.push(v < valid[0] ? null : errorCodeOffsetFromSchema(response, v));
    const e: Expected = {
      key: request.apiKey!,
      name: request.name.replace(/Request$/, ''),
      minVersion: valid[0],
      maxVersion: valid[1],
      firstFlexibleVersion: flexible === null ? null : flexible[0],
      errorCodeOffsets,
    };
    KIP_1313_DELTAS.get(e.key)?.(e);
    out.push(e);
  }
  return out.sort((a, b) => a.key - b.key);
}

describe.skipIf(!existsSync(specDir))('API table against the Kafka message schemas', () => {
  it('has exactly the schemas’ APIs, versions, flexible versions and ErrorCode offsets (plus KIP-1313)', () => {
    const expected = expectedFromSchemas();
    expect(expected.length).toBe(88);
    const actual = ALL_APIS.map((a) => ({ ...a, errorCodeOffsets: [...a.errorCodeOffsets] }));
    expect(actual).toEqual(expected);
  });

  it('request and response schemas agree on versions', () => {
    for (const file of readdirSync(specDir).filter((f) => f.endsWith('Request.json'))) {
      const request = load(file);
      if (request.type !== 'request') continue;
      const response = load(file.replace(/Request\.json$/, 'Response.json'));
      expect([response.validVersions, response.flexibleVersions], file).toEqual([request.validVersions, request.flexibleVersions]);
    }
  });

  it('KIP-1313 deltas are still deltas (the schemas have not caught up)', () => {
    expect(load('GetTelemetrySubscriptionsRequest.json').validVersions).toBe('0');
    expect(load('PushTelemetryRequest.json').validVersions).toBe('0');
  });
});

describe('API table lookups', () => {
  it.each([
    [0, 'Produce'],
    [1, 'Fetch'],
    [18, 'ApiVersions'],
    [68, 'ConsumerGroupHeartbeat'],
    [71, 'GetTelemetrySubscriptions'],
    [72, 'PushTelemetry'],
    [87, 'ReadShareGroupStateSummary'],
    [88, 'Unknown(88)'],
    [-1, 'Unknown(-1)'],
    [1.5, 'Unknown(1.5)'],
  ])('apiName(%s) = %s', (key, name) => {
    expect(apiName(key)).toBe(name);
  });

  it('keys are dense from 0 and match their index', () => {
    ALL_APIS.forEach((a, i) => expect(a.key).toBe(i));
    expect(apiInfo(88)).toBeUndefined();
  });

  it.each([
    // key, version, valid, flexible
    [0, 8, true, false],
    [0, 9, true, true],
    [0, 11, true, true],
    [0, 12, false, false],
    [0, -1, false, false],
    [17, 1, true, false],
    [18, 2, true, false],
    [18, 3, true, true],
    [71, 0, true, true],
    [71, 1, true, true],
    [71, 2, false, false],
    [72, 1, true, true],
    [47, 0, true, false],
    [200, 0, false, false],
  ])('key %i v%i: valid %s, flexible %s', (key, version, valid, flexible) => {
    expect(isValidVersion(key, version)).toBe(valid);
    expect(isFlexible(key, version)).toBe(flexible);
  });

  it.each([
    // key, version, ErrorCode offset
    [0, 11, null],
    [1, 6, null],
    [1, 7, 4],
    [10, 0, 0],
    [10, 3, 4],
    [10, 4, null],
    [11, 1, 0],
    [11, 2, 4],
    [18, 4, 0],
    [18, 5, null],
    [24, 3, null],
    [24, 4, 4],
    [58, 0, null],
    [71, 1, 4],
    [72, 1, 4],
    [99, 0, null],
  ])('errorCodeOffset(%i, %i) = %s', (key, version, offset) => {
    expect(errorCodeOffset(key, version)).toBe(offset);
  });

  it.each([
    ['0+', { min: 0, max: Infinity }],
    ['3+', { min: 3, max: Infinity }],
    ['1-3', { min: 1, max: 3 }],
    ['2', { min: 2, max: 2 }],
    ['none', null],
    ['', null],
    ['x', null],
  ])('parseVersionRange(%j)', (text, expected) => {
    expect(parseVersionRange(text)).toEqual(expected);
  });
});
