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

/** A compiled struct writer: a decoded struct's JSON text. */
type Writer = (s: Struct) => string;

/** An element of an array, or a field's value, as an expression of `x` (not null). */
function valueCode(kind: Kind, writer: string): string {
  switch (kind) {
    case NUMBER:
      return 'String(x)';
    case FLOAT:
      // NaN and the infinities are not JSON numbers: written as strings.
      return '(Number.isFinite(x) ? String(x) : `"${String(x)}"`)';
    case BOOL:
      return "(x === true ? 'true' : 'false')";
    case BIGINT:
      // int64 is exact: written from the bigint, never through a double.
      return 'x.toString()';
    case STRING:
      return 'jsonString(x)';
    case UUID:
      return '`"${uuidToBase64(x)}"`';
    case SIZE:
      return 'String(x.size)';
    case STRUCT:
      return `${writer}(x)`;
  }
}

/**
 * A struct's writer as straight-line code, as interpreter.ts compiles a struct's reader: one property
 * read per field under its own name (each decoded struct's values share one hidden class, so every
 * read site sees one shape), and the keys as constants. The generated text holds no schema text but
 * field names and keys, written as JSON string literals; the nested structs' writers are passed in.
 */
function compile(fields: readonly FieldPlan[]): Writer {
  const writers: Writer[] = [];
  const lines: string[] = [];
  for (const f of fields) {
    let writer = '';
    if (f.kind === STRUCT) {
      writer = `w${writers.length}`;
      writers.push(compile(f.fields!));
    }
    const lit = JSON.stringify;
    lines.push(`v = s[${lit(f.name)}];`, 'if (v !== undefined) {', "  if (out.length !== 1) out += ',';");
    lines.push(`  if (v === null) out += ${lit(`${f.nullKey}null`)};`);
    if (f.replace !== undefined) lines.push(`  else out += ${lit(f.key + f.replace)};`);
    else if (f.isArray) {
      lines.push(
        `  else {`,
        `    out += ${lit(`${f.key}[`)};`,
        `    for (let j = 0; j < v.length; j++) {`,
        `      const x = v[j];`,
        `      if (j !== 0) out += ',';`,
        `      out += x === null ? 'null' : ${valueCode(f.kind, writer)};`,
        `    }`,
        `    out += ']';`,
        `  }`,
      );
    } else lines.push(`  else { const x = v; out += ${lit(f.key)} + ${valueCode(f.kind, writer)}; }`);
    lines.push('}');
  }
  const body = `return function struct(s) {
  let out = '{';
  let v;
  ${lines.join('\n  ')}
  return out + '}';
};`;
  const params = writers.map((_, i) => `w${i}`);
  const make = new Function('jsonString', 'uuidToBase64', ...params, body) as (...a: unknown[]) => Writer;
  return make(jsonString, uuidToBase64, ...writers);
}

/** Compiled writers per message, version and replacement map (the replacements are fixed per API). */
const writers = new WeakMap<MessageSchema, Map<number, WeakMap<object, Writer>>>();
const NO_REPLACEMENTS: ReadonlyMap<string, string> = new Map();

function writerFor(message: MessageSchema, version: number, replace: ReadonlyMap<string, string>): Writer {
  let byVersion = writers.get(message);
  if (byVersion === undefined) writers.set(message, (byVersion = new Map()));
  let byReplace = byVersion.get(version);
  if (byReplace === undefined) byVersion.set(version, (byReplace = new WeakMap()));
  let writer = byReplace.get(replace);
  if (writer === undefined) {
    const layout = layoutFor(message, version);
    if (!layout) throw new RangeError(`${message.name} has no version ${version}`);
    byReplace.set(replace, (writer = compile(plan(layout.fields, version, '', replace.size === 0 ? undefined : replace))));
  }
  return writer;
}

/**
 * The JSON text of a decoded body (`message` at `version`), in Kafka's JSON converter form: fields in
 * schema order, absent ones (a version's missing or an untaken tagged field) left out. The text is
 * terminal-safe as safeJson's is (base/json-text.ts): wire strings and the schema's names alike.
 */
export function toKafkaJson(value: Struct, message: MessageSchema, version: number, options: JsonOptions = {}): string {
  return writerFor(message, version, options.replace ?? NO_REPLACEMENTS)(value);
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
