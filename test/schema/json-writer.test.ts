/**
 * schema/json.ts compiles each struct's JSON writer to code. Its field names and keys come from the
 * schemas, which --kafka-specs lets a user supply: they must stay data in the generated text (JSON
 * string literals), whatever they hold, and the values they key must be written as before.
 */
import { describe, expect, it } from 'vitest';
import { toKafkaJson } from '../../src/kafka/schema/json.js';
import type { Struct } from '../../src/kafka/schema/interpreter.js';
import type { FieldSchema, MessageSchema } from '../../src/kafka/schema/model.js';
import { API_KEY, builtinSchemas } from '../../src/kafka/schema/registry.js';

/** ApiVersions request v3 (two string fields), its fields renamed. */
function renamed(names: readonly [string, string]): MessageSchema {
  const m = builtinSchemas().apis.get(API_KEY.ApiVersions)!.request;
  return {
    ...m,
    layouts: m.layouts.map((l) => ({
      ...l,
      fields: l.fields.map((f, i): FieldSchema => (i < 2 ? { ...f, name: names[i]!, jsonName: names[i]! } : f)),
    })),
  };
}

describe('compiled JSON writers', () => {
  it('keep hostile field names as data: quotes, backslashes, line breaks, U+2028, code', () => {
    const a = '"]; globalThis.pwned = 1; //';
    const b = 'x\\\n\u2028`${globalThis.pwned = 2}`';
    const value = Object.assign(Object.create(null) as Struct, { [a]: 'librdkafka', [b]: '2.0\u0000' });
    const text = toKafkaJson(value, renamed([a, b]), 3);
    expect(text).toBe('{"\\"]; globalThis.pwned = 1; //":"librdkafka","x\\\\\\n\\u2028`${globalThis.pwned = 2}`":"2.0\\u0000"}');
    expect(JSON.parse(text)).toEqual({ [a]: 'librdkafka', [b]: '2.0\u0000' });
    expect((globalThis as { pwned?: number }).pwned).toBeUndefined();
  });

  it('write nulls under the field name, leave absent fields out, and put commas only between present ones', () => {
    const m = renamed(['ClientSoftwareName', 'ClientSoftwareVersion']);
    const of = (o: object) => Object.assign(Object.create(null) as Struct, o);
    expect(toKafkaJson(of({ ClientSoftwareVersion: null }), m, 3)).toBe('{"ClientSoftwareVersion":null}');
    expect(toKafkaJson(of({}), m, 3)).toBe('{}');
    expect(toKafkaJson(of({ ClientSoftwareName: '', ClientSoftwareVersion: 'é' }), m, 3)).toBe('{"ClientSoftwareName":"","ClientSoftwareVersion":"é"}');
  });
});
