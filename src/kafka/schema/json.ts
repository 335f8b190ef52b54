/**
 * Decoded bodies written the way Kafka's generated JSON converters write them (the *JsonConverter
 * classes the broker's request log uses, KIP-673), so a kcid line reads like a broker's
 * `kafka.request.logger` line: fields in schema order under their lowerCamelCase names, int64 as
 * JSON numbers (exact: written from the bigint), UUIDs as Kafka's base64 (Uuid.toString), and a
 * records field as `<name>SizeInBytes` (Kafka's converter with serializeRecords off). One deliberate
 * difference: Kafka writes a bytes field's content as base64, kcid writes its size the same way as
 * records (`<name>SizeInBytes`), since bytes fields carry SASL tokens, SCRAM salts and token HMACs.
 *
 * {@link visitFields} walks a decoded value with its schema. `toKafkaJson` is compiled per message,
 * version and set of replaced fields (hidden config values): each struct's keys are made once, and a
 * body is written in one pass over its decoded value, with no object built on the way.
 */
import { uuidToBase64 } from '../uuid.js';
import { inRange, layoutFor, type FieldSchema, type MessageSchema } from './model.js';
import { UNKNOWN_TAGS, type Struct, type Value } from './interpreter.js';
import { jsonString } from '../../base/json-text.js';

export interface JsonOptions {
  /**
   * Fields whose value is written as given JSON text instead (Kafka's "[hidden]" for config values),
   * keyed by the field's path: struct names joined by dots, no indices ("Topics.Configs.Value").
   * A null value stays null.
   */
  readonly replace?: ReadonlyMap<string, string>;
}

function fieldsAt(fields: readonly FieldSchema[], version: number): FieldSchema[] {
  return fields.filter((f) => inRange(f.versions, version));
}

// How a field's value (an array's elements, for an array) is written.
const NUMBER = 0;
const FLOAT = 1;
const BOOL = 2;
const BIGINT = 3;
const STRING = 4;
const UUID = 5;
const SIZE = 6;
const STRUCT = 7;
type Kind = typeof NUMBER | typeof FLOAT | typeof BOOL | typeof BIGINT | typeof STRING | typeof UUID | typeof SIZE | typeof STRUCT;

/** One field of a struct at one version, with its JSON key text made once. */
interface FieldPlan {
  readonly name: string;
  /** `"jsonName":` (`"jsonNameSizeInBytes":` for bytes and records). */
  readonly key: string;
  /** The key a null value is written under (bytes and records: the plain name, as Kafka's converters do). */
  readonly nullKey: string;
  readonly kind: Kind;
  readonly isArray: boolean;
  readonly fields: readonly FieldPlan[] | null;
  /** JSON text written instead of a non-null value ({@link JsonOptions.replace}). */
  readonly replace: string | undefined;
}

function kindOf(f: FieldSchema): Kind {
  switch (f.primitive) {
    case null:
      return STRUCT;
    case 'float64':
      return FLOAT;
    case 'bool':
      return BOOL;
    case 'int64':
    case 'varlong':
      return BIGINT;
    case 'string':
      return STRING;
    case 'uuid':
      return UUID;
    case 'bytes':
    case 'records':
      return SIZE;
    default:
      return NUMBER;
  }
}

function plan(fields: readonly FieldSchema[], version: number, path: string, replace: ReadonlyMap<string, string> | undefined): FieldPlan[] {
  return fieldsAt(fields, version).map((f) => {
    const p = path === '' ? f.name : `${path}.${f.name}`;
    const kind = kindOf(f);
    const replaced = replace?.get(p);
    return {
      name: f.name,
      // A replaced value is written under the field's own name (it is not a size any more).
      key: `${jsonString(kind === SIZE && replaced === undefined ? `${f.jsonName}SizeInBytes` : f.jsonName)}:`,
      nullKey: `${jsonString(f.jsonName)}:`,
      kind,
      isArray: f.isArray,
      fields: f.struct === null ? null : plan(f.struct.fields, version, p, replace),
      replace: replaced,
    };
  });
}

function element(kind: Kind, fields: readonly FieldPlan[] | null, v: Value): string {
  if (v === null) return 'null';
  switch (kind) {
    case NUMBER:
      return String(v);
    case FLOAT:
      // NaN and the infinities are not JSON numbers: written as strings.
      return Number.isFinite(v) ? String(v) : `"${String(v)}"`;
    case BOOL:
      return v === true ? 'true' : 'false';
    case BIGINT:
      // int64 is exact: written from the bigint, never through a double.
      return (v as bigint).toString();
    case STRING:
      return jsonString(v as string);
    case UUID:
      return `"${uuidToBase64(v as Uint8Array)}"`;
    case SIZE:
      return String((v as { size: number }).size);
    case STRUCT:
      return struct(fields!, v as Struct);
  }
}

function struct(fields: readonly FieldPlan[], s: Struct): string {
  let out = '{';
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i]!;
    const v = s[f.name] as Value | undefined;
    if (v === undefined) continue;
    if (out.length > 1) out += ',';
    if (v === null) out += `${f.nullKey}null`;
    else if (f.replace !== undefined) out += f.key + f.replace;
    else if (f.isArray) {
      const items = v as Value[];
      out += `${f.key}[`;
      for (let j = 0; j < items.length; j++) out += (j === 0 ? '' : ',') + element(f.kind, f.fields, items[j]!);
      out += ']';
    } else out += f.key + element(f.kind, f.fields, v);
  }
  return `${out}}`;
}

/** Compiled plans per message, version and replacement map (the replacements are fixed per API). */
const plans = new WeakMap<MessageSchema, Map<number, WeakMap<object, FieldPlan[]>>>();
const NO_REPLACEMENTS: ReadonlyMap<string, string> = new Map();

function planFor(message: MessageSchema, version: number, replace: ReadonlyMap<string, string>): FieldPlan[] {
  let byVersion = plans.get(message);
  if (byVersion === undefined) plans.set(message, (byVersion = new Map()));
  let byReplace = byVersion.get(version);
  if (byReplace === undefined) byVersion.set(version, (byReplace = new WeakMap()));
  let fields = byReplace.get(replace);
  if (fields === undefined) {
    const layout = layoutFor(message, version);
    if (!layout) throw new RangeError(`${message.name} has no version ${version}`);
    byReplace.set(replace, (fields = plan(layout.fields, version, '', replace.size === 0 ? undefined : replace)));
  }
  return fields;
}

/**
 * The JSON text of a decoded body (`message` at `version`), in Kafka's JSON converter form: fields in
 * schema order, absent ones (a version's missing or an untaken tagged field) left out. The text is
 * terminal-safe as safeJson's is (base/json-text.ts): wire strings and the schema's names alike.
 */
export function toKafkaJson(value: Struct, message: MessageSchema, version: number, options: JsonOptions = {}): string {
  return struct(planFor(message, version, options.replace ?? NO_REPLACEMENTS), value);
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
