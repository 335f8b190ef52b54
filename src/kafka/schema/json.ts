/**
 * Decoded bodies written the way Kafka's generated JSON converters write them (the *JsonConverter
 * classes the broker's request log uses, KIP-673), so a kcid line reads like a broker's
 * `kafka.request.logger` line: fields in schema order under their lowerCamelCase names, int64 as
 * JSON numbers (exact: written from the bigint), UUIDs as Kafka's base64 (Uuid.toString), and a
 * records field as `<name>SizeInBytes` (Kafka's converter with serializeRecords off). One deliberate
 * difference: Kafka writes a bytes field's content as base64, kcid writes its size the same way as
 * records (`<name>SizeInBytes`), since bytes fields carry SASL tokens, SCRAM salts and token HMACs.
 *
 * {@link visitFields} walks a decoded value with its schema; `toKafkaJson`'s `transform` hook sees every
 * field first, so a caller can hide fields by name (config values, passwords) or shorten them.
 */
import { uuidToBase64 } from '../uuid.js';
import { inRange, layoutFor, type FieldSchema, type MessageSchema } from './model.js';
import { UNKNOWN_TAGS, type Struct, type Value } from './interpreter.js';

/** Returned by a transform: leave the field out. */
export const OMIT: unique symbol = Symbol('omit');

export interface JsonOptions {
  /**
   * Called for every field present in the value, with its path ("TopicData[0].Name"); return undefined to
   * write the field as usual, OMIT to leave it out, or a JSON value to write instead.
   */
  readonly transform?: (field: FieldSchema, value: Value, path: string) => unknown;
}

function fieldsAt(fields: readonly FieldSchema[], version: number): FieldSchema[] {
  return fields.filter((f) => inRange(f.versions, version));
}

function scalar(f: FieldSchema, v: Value): unknown {
  if (v === null) return null;
  if (typeof v === 'bigint') return new RawNumber(v.toString());
  if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
  if (v instanceof Uint8Array) return uuidToBase64(v);
  if (f.primitive === 'bytes' || f.primitive === 'records') return (v as { size: number }).size;
  return v;
}

/** A number written as is (an int64 beyond 2^53 must not go through a double). */
class RawNumber {
  constructor(readonly text: string) {}
}

function convert(fields: readonly FieldSchema[], version: number, s: Struct, path: string, o: JsonOptions): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const f of fieldsAt(fields, version)) {
    if (!(f.name in s)) continue;
    const v = s[f.name] as Value;
    const p = path === '' ? f.name : `${path}.${f.name}`;
    const t = o.transform?.(f, v, p);
    const key = f.primitive === 'bytes' || f.primitive === 'records' ? `${f.jsonName}SizeInBytes` : f.jsonName;
    if (t === OMIT) continue;
    if (t !== undefined) {
      out.set(f.jsonName, t);
      continue;
    }
    if (v === null) out.set(f.primitive === 'bytes' || f.primitive === 'records' ? f.jsonName : key, null);
    else if (f.isArray) {
      out.set(
        key,
        (v as Value[]).map((e, i) => (f.struct ? convert(f.struct.fields, version, e as Struct, `${p}[${i}]`, o) : scalar(f, e))),
      );
    } else if (f.struct) out.set(key, convert(f.struct.fields, version, v as Struct, p, o));
    else out.set(key, scalar(f, v));
  }
  return out;
}

function write(v: unknown): string {
  if (v instanceof Map) {
    let s = '{';
    let first = true;
    for (const [k, e] of v) {
      s += `${first ? '' : ','}${JSON.stringify(k)}:${write(e)}`;
      first = false;
    }
    return `${s}}`;
  }
  if (Array.isArray(v)) return `[${v.map(write).join(',')}]`;
  if (v instanceof RawNumber) return v.text;
  if (typeof v === 'bigint') return v.toString();
  return JSON.stringify(v) ?? 'null';
}

/** The JSON text of a decoded body (`message` at `version`), in Kafka's JSON converter form. */
export function toKafkaJson(value: Struct, message: MessageSchema, version: number, options: JsonOptions = {}): string {
  const layout = layoutFor(message, version);
  if (!layout) throw new RangeError(`${message.name} has no version ${version}`);
  return write(convert(layout.fields, version, value, '', options));
}

/**
 * Calls `visit` for every field present in a decoded value, depth first, with its schema and path;
 * unknown tagged fields are not fields and are not visited.
 */
export function visitFields(value: Struct, message: MessageSchema, version: number, visit: (field: FieldSchema, value: Value, path: string) => void): void {
  const layout = layoutFor(message, version);
  if (!layout) return;
  const walk = (fields: readonly FieldSchema[], s: Struct, path: string): void => {
    for (const f of fieldsAt(fields, version)) {
      if (!(f.name in s) || f.name === UNKNOWN_TAGS) continue;
      const v = s[f.name] as Value;
      const p = path === '' ? f.name : `${path}.${f.name}`;
      visit(f, v, p);
      if (v === null || !f.struct) continue;
      if (f.isArray) (v as Value[]).forEach((e, i) => walk(f.struct!.fields, e as Struct, `${p}[${i}]`));
      else walk(f.struct.fields, v as Struct, p);
    }
  };
  walk(layout.fields, value, '');
}
