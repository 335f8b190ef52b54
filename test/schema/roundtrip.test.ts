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
