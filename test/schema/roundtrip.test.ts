/**
 * Every API's request and response, at every version kcid defines (the lowest and highest included),
 * written with random values by test/schema/encoder.ts and read back by the interpreter: the value
 * must come back exactly, and the whole frame must be read.
 */
import { describe, expect, it } from 'vitest';
import { compileDecoder, runDecoder } from '../../src/kafka/schema/interpreter.js';
import { builtinSchemas } from '../../src/kafka/schema/registry.js';
import type { MessageSchema } from '../../src/kafka/schema/model.js';
import { randomMessage } from './encoder.js';

const schemas = builtinSchemas();

function roundTrip(m: MessageSchema, version: number, seed: number): void {
  const { bytes, value } = randomMessage(m, version, seed);
  const d = compileDecoder(m, version)!;
  const got = runDecoder(d, bytes, 0, bytes.length);
  expect(got.complete).toBe(true);
  expect(got.end).toBe(bytes.length);
  expect(got.trailing).toBe(0);
  expect(got.value).toEqual(value);
}

describe('every API, every defined version, round trip', () => {
  for (const api of schemas.apis.values()) {
    it(`${api.key} ${api.name} ${api.definedVersions.lo}-${api.definedVersions.hi}`, () => {
      expect(api.definedVersions.lo).toBeLessThanOrEqual(api.definedVersions.hi);
      for (let v = api.definedVersions.lo; v <= api.definedVersions.hi; v++) {
        for (const seed of [1, 2, 3]) {
          roundTrip(api.request, v, seed * 1000 + v);
          roundTrip(api.response, v, seed * 1000 + v + 500);
        }
      }
    });
  }
  it('both headers, every version', () => {
    for (const m of [schemas.requestHeader, schemas.responseHeader]) {
      for (let v = m.definedVersions.lo; v <= m.definedVersions.hi; v++) for (const seed of [1, 2, 3, 4]) roundTrip(m, v, seed + v * 10);
    }
  });
});

describe('every schema type, both encodings', () => {
  it('a schema with all of Kafka\'s types (uint32, varint, varlong appear in no message yet), classic v0 and flexible v1', async () => {
    const { resolveSchemas } = await import('../../src/kafka/schema/registry.js');
    const types = ['bool', 'int8', 'int16', 'uint16', 'int32', 'uint32', 'int64', 'varint', 'varlong', 'float64', 'string', 'bytes', 'records', 'uuid'];
    const scalar = types.map((t) => ({ name: `F${t}`, type: t, versions: '0+' }));
    const nullable = ['string', 'bytes', 'records'].map((t) => ({ name: `N${t}`, type: t, versions: '0+', nullableVersions: '0+' }));
    const arrays = types.filter((t) => t !== 'records').map((t) => ({ name: `A${t}`, type: `[]${t}`, versions: '0+' }));
    const fields = [
      ...scalar,
      ...nullable,
      ...arrays,
      { name: 'NullableArray', type: '[]int32', versions: '0+', nullableVersions: '0+' },
      { name: 'Common', type: 'Shared', versions: '0+' },
      { name: 'MaybeCommon', type: 'Shared', versions: '0+', nullableVersions: '0+' },
      { name: 'Structs', type: '[]Inline', versions: '0+', fields: [{ name: 'X', type: 'int32', versions: '0+' }, { name: 'Deep', type: '[]Shared', versions: '0+' }] },
      { name: 'OnlyV1', type: 'string', versions: '1+' },
      { name: 'Tagged', type: 'uuid', versions: '1+', taggedVersions: '1+', tag: 0 },
      { name: 'TaggedStruct', type: 'Shared', versions: '1+', taggedVersions: '1+', tag: 1 },
      { name: 'ClassicString', type: 'string', versions: '0+', flexibleVersions: 'none' },
    ];
    const msg = (type: string) => ({
      apiKey: 1000,
      type,
      name: `AllTypes${type === 'request' ? 'Request' : 'Response'}`,
      validVersions: '0-1',
      flexibleVersions: '1+',
      fields,
      commonStructs: [{ name: 'Shared', versions: '0+', fields: [{ name: 'A', type: 'int64', versions: '0+' }, { name: 'B', type: 'string', versions: '0+', nullableVersions: '0+' }] }],
    });
    const header = (name: string) => ({ type: 'header', name, validVersions: '0', fields: [] });
    const t = resolveSchemas([msg('request'), msg('response'), header('RequestHeader'), header('ResponseHeader')], [], 'all types');
    const m = t.apis.get(1000)!.request;
    for (let seed = 1; seed <= 40; seed++) for (const v of [0, 1]) roundTrip(m, v, seed * 7 + v);
  });
});
