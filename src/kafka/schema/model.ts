/**
 * The schema model: Kafka's message schemas (clients/src/main/resources/common/message/*.json) as kcid
 * holds them after reading, whether built in (generated.ts) or loaded with --kafka-specs.
 *
 * The names follow Kafka's JSON keys (see that folder's README.md): a message has validVersions,
 * flexibleVersions and fields; a field has versions, nullableVersions, taggedVersions and tag, and so
 * on. Version ranges are parsed once ({@link VersionRange}); struct types are resolved to their
 * fields (inline or from commonStructs), so the interpreter never looks a name up.
 */

/** A contiguous range of versions, both ends included; `hi` is {@link OPEN} for Kafka's "N+". */
export interface VersionRange {
  readonly lo: number;
  readonly hi: number;
}

/** The upper end of an open range ("3+"): Kafka versions are int16. */
export const OPEN = 0x7fff;

/** Thrown for any problem with schemas: a path without schemas, a file that does not parse, a bad field. */
export class SchemaError extends Error {
  override readonly name = 'SchemaError';
}

/** Parses Kafka's version range text: "none" is null, "3" is 3-3, "0-2" is 0-2, "3+" is 3-OPEN. */
export function parseVersions(text: string, where: string): VersionRange | null {
  if (text === 'none') return null;
  const m = /^(\d{1,5})(?:(\+)|-(\d{1,5}))?$/.exec(text);
  if (m) {
    const lo = Number(m[1]);
    const hi = m[2] ? OPEN : m[3] !== undefined ? Number(m[3]) : lo;
    if (lo <= hi && hi <= OPEN) return { lo, hi };
  }
  throw new SchemaError(`${where}: bad version range ${JSON.stringify(text)}`);
}

export function inRange(r: VersionRange | null, v: number): boolean {
  return r !== null && v >= r.lo && v <= r.hi;
}

/** Kafka's text for a range: "0-2", "3+", "5", "none". */
export function formatVersions(r: VersionRange | null): string {
  if (r === null) return 'none';
  if (r.hi === OPEN) return `${r.lo}+`;
  return r.lo === r.hi ? `${r.lo}` : `${r.lo}-${r.hi}`;
}

/** Every primitive type of Kafka's schemas (the message README's "Field Types"). */
export type PrimitiveType =
  | 'bool'
  | 'int8'
  | 'int16'
  | 'uint16'
  | 'int32'
  | 'uint32'
  | 'int64'
  | 'varint'
  | 'varlong'
  | 'float64'
  | 'string'
  | 'bytes'
  | 'records'
  | 'uuid';

export const PRIMITIVE_TYPES: ReadonlySet<string> = new Set<PrimitiveType>([
  'bool',
  'int8',
  'int16',
  'uint16',
  'int32',
  'uint32',
  'int64',
  'varint',
  'varlong',
  'float64',
  'string',
  'bytes',
  'records',
  'uuid',
]);

export interface StructSchema {
  /** The struct's type name ("TopicProduceData"). */
  readonly name: string;
  readonly fields: readonly FieldSchema[];
}

export interface FieldSchema {
  /** The schema's name ("TopicData"): the key of a decoded struct. */
  readonly name: string;
  /** Kafka's JSON converter name (lowerCamelCase: "topicData"). */
  readonly jsonName: string;
  /** The type as the schema writes it ("int16", "[]int32", "[]TopicProduceData", "LeaderIdAndEpoch"). */
  readonly type: string;
  /** The scalar's type, or an array's element type when it is primitive; null for a struct or []struct. */
  readonly primitive: PrimitiveType | null;
  readonly isArray: boolean;
  /** The struct of a struct or []struct field, else null. */
  readonly struct: StructSchema | null;
  readonly versions: VersionRange | null;
  readonly nullableVersions: VersionRange | null;
  /** A field's own flexibleVersions (RequestHeader's ClientId: "none"), else null: the message's apply. */
  readonly flexibleVersions: VersionRange | null | undefined;
  readonly taggedVersions: VersionRange | null;
  readonly tag: number | null;
  /** The schema's default, as written ("null", "-1", "true", "0x7fffffff"), else null. */
  readonly default: string | null;
  readonly entityType: string | null;
  readonly ignorable: boolean;
  readonly mapKey: boolean;
  readonly zeroCopy: boolean;
  /**
   * True for a `bytes` field or an array of them: content that may be a secret (SASL tokens, SCRAM salts,
   * delegation token HMACs) and is never shown, only its size.
   */
  readonly isBytes: boolean;
}

/** One wire layout of a message: the fields and flexible versions that hold for `versions`. */
export interface MessageLayout {
  readonly versions: VersionRange;
  readonly flexibleVersions: VersionRange | null;
  readonly fields: readonly FieldSchema[];
}

/** A row of Kafka's headerVersions map: body versions `versions` use header version `header`. */
export interface HeaderVersionRow {
  readonly versions: VersionRange;
  readonly header: number;
}

export type MessageType = 'request' | 'response' | 'header';

export interface MessageSchema {
  /** "ProduceRequest", "RequestHeader". */
  readonly name: string;
  readonly type: MessageType;
  readonly apiKey: number | null;
  /** What current Kafka accepts (null: no version: the API was removed). */
  readonly validVersions: VersionRange | null;
  /** Every version kcid can decode: the valid ones and those a newer Kafka removed. */
  readonly definedVersions: VersionRange;
  readonly flexibleVersions: VersionRange | null;
  /** The current layout (validVersions), then the layout of removed versions when they differ. */
  readonly layouts: readonly MessageLayout[];
  /** Kafka's `headerVersions` map when the schema has one, else null (kcid then applies Kafka's rule). */
  readonly headerVersions: readonly HeaderVersionRow[] | null;
  readonly latestVersionUnstable: boolean;
  readonly listeners: readonly string[];
}

export interface RemovedVersions {
  readonly versions: VersionRange;
  /** The Apache Kafka release that removed them ("4.0"), as the schema's comment says. */
  readonly release: string;
}

export interface ApiSchema {
  readonly key: number;
  /** The request schema's name without "Request" ("Produce"). */
  readonly name: string;
  readonly request: MessageSchema;
  readonly response: MessageSchema;
  /** What current Kafka accepts; null when it accepts none (LeaderAndIsr in Kafka 4). */
  readonly validVersions: VersionRange | null;
  /** The valid versions and the removed ones: every version kcid decodes. */
  readonly definedVersions: VersionRange;
  readonly removed: RemovedVersions | null;
  readonly flexibleVersions: VersionRange | null;
}

export interface ErrorInfo {
  readonly code: number;
  /** Kafka's Errors enum name ("UNSUPPORTED_VERSION"). */
  readonly name: string;
  /** Its default exception message ("" for NONE). */
  readonly message: string;
}

export interface ProtocolSchemas {
  /** Where the schemas come from: "built-in: ..." or the --kafka-specs path. */
  readonly source: string;
  readonly apis: ReadonlyMap<number, ApiSchema>;
  readonly requestHeader: MessageSchema;
  readonly responseHeader: MessageSchema;
  readonly errors: ReadonlyMap<number, ErrorInfo>;
}

/** The layout that holds for `version`, or null when the message does not define it. */
export function layoutFor(m: MessageSchema, version: number): MessageLayout | null {
  for (const l of m.layouts) if (inRange(l.versions, version)) return l;
  return null;
}

/** Bytes of the fixed-size primitives on the wire (the others are length-prefixed or varints). */
export const FIXED_SIZE: Readonly<Partial<Record<string, number>>> = { bool: 1, int8: 1, int16: 2, uint16: 2, int32: 4, uint32: 4, int64: 8, float64: 8, uuid: 16 };

/** Does this field (or a struct below it) have an int16 ErrorCode in this version? (The error tap and scan read them.) */
export function holdsErrorCode(f: FieldSchema, version: number, depth = 0): boolean {
  if (f.name === 'ErrorCode' && f.primitive === 'int16' && !f.isArray) return true;
  if (f.struct === null || depth > 32) return false;
  return f.struct.fields.some((g) => inRange(g.versions, version) && holdsErrorCode(g, version, depth + 1));
}

/** Kafka's JSON converter field names: the schema name with its first letter lower-cased. */
export function lowerCamel(name: string): string {
  return name.length === 0 ? name : name[0]!.toLowerCase() + name.slice(1);
}

/**
 * The selection paths ("Responses.PartitionResponses.ErrorCode") of every field of `message` at `version`
 * that `match` accepts, at any depth: what the `select` option of interpreter.ts takes. For
 * example every error code a response carries (`f => f.name === 'ErrorCode'`), or every topic name
 * (`f => f.entityType === 'topicName'`). A struct reached twice on one path (none of Kafka's does) is
 * not followed again.
 */
export function fieldPaths(message: MessageSchema, version: number, match: (f: FieldSchema) => boolean): string[] {
  const layout = layoutFor(message, version);
  if (!layout) return [];
  const out: string[] = [];
  const walk = (fields: readonly FieldSchema[], prefix: string, seen: ReadonlySet<StructSchema>): void => {
    for (const f of fields) {
      if (!inRange(f.versions, version)) continue;
      const p = prefix === '' ? f.name : `${prefix}.${f.name}`;
      if (match(f)) out.push(p);
      else if (f.struct && !seen.has(f.struct)) walk(f.struct.fields, p, new Set([...seen, f.struct]));
    }
  };
  walk(layout.fields, '', new Set());
  return out;
}
