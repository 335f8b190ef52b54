/**
 * The registry: Kafka's schemas as kcid uses them, built in or loaded from the user's Kafka
 * (--kafka-specs), and the few questions every stage asks of them: an API's name, whether a version
 * is valid (accepted by current Kafka) or only defined (removed, but still decodable), whether it is
 * flexible, which header version it uses, and an error code's name.
 *
 * The built-in schemas are generated.ts (Kafka trunk of August 2026, plus the 2024 layouts of the
 * versions KIP-896 removed) with the KIP-1313 overlay (overlay.ts) on top. The generated JSON is
 * parsed at the first call of {@link builtinSchemas}, not when the module loads: `kcid --version`
 * never pays for it.
 */
import { readFileSync, readdirSync, statSync, type Stats } from 'node:fs';
import { basename, join } from 'node:path';
import { API_KEY, GENERATED_SCHEMAS, GENERATED_SOURCE } from './generated.js';
import {
  OPEN,
  PRIMITIVE_TYPES,
  SchemaError,
  inRange,
  lowerCamel,
  parseVersions,
  type ApiSchema,
  type ErrorInfo,
  type FieldSchema,
  type HeaderVersionRow,
  type MessageLayout,
  type MessageSchema,
  type PrimitiveType,
  type ProtocolSchemas,
  type StructSchema,
  type VersionRange,
} from './model.js';
import { KIP1313_OVERLAY, OVERLAY_SOURCE } from './overlay.js';
import { readRawFile, type RawField, type RawMessage, type RawStruct } from './raw.js';
import { readZipEntries } from './zip.js';

export { API_KEY };
export type ApiName = keyof typeof API_KEY;

// ---------------------------------------------------------------------------------------------------
// From raw schemas to the model

/** Field names become keys of decoded structs (null-prototype objects) and JSON names: plain identifiers only. */
const FIELD_NAME = /^[A-Za-z][A-Za-z0-9]*$/;

function optVersions(text: unknown, where: string): VersionRange | null {
  if (text === undefined) return null;
  if (typeof text !== 'string') throw new SchemaError(`${where}: a version range must be a string`);
  return parseVersions(text, where);
}

class Resolver {
  private readonly common = new Map<string, RawStruct>();
  private readonly built = new Map<string, StructSchema>();
  /** Common structs being built, outermost first. */
  private readonly building: string[] = [];

  constructor(
    private readonly messageName: string,
    structs: readonly RawStruct[] | undefined,
  ) {
    for (const s of structs ?? []) {
      if (typeof s?.name !== 'string' || !Array.isArray(s.fields)) throw new SchemaError(`${messageName}: a common struct without name or fields`);
      this.common.set(s.name, s);
    }
  }

  fields(raw: readonly RawField[], where: string, depth: number): FieldSchema[] {
    if (depth > 32) throw new SchemaError(`${where}: structs nested more than 32 deep`);
    const out: FieldSchema[] = [];
    const tags = new Set<number>();
    for (const f of raw) {
      const field = this.field(f, where, depth);
      if (field.tag !== null) {
        if (tags.has(field.tag)) throw new SchemaError(`${where}.${field.name}: tag ${field.tag} used twice`);
        tags.add(field.tag);
      }
      out.push(field);
    }
    // Kafka's generator (StructSpec) requires a struct's tags to be contiguous from 0, which also
    // keeps every tag below the struct's number of fields: tags near 2^31 are refused here.
    for (let i = 0; i < tags.size; i++) {
      if (!tags.has(i)) throw new SchemaError(`${where}: tags are not contiguous from 0 (${Math.max(...tags)} is used, ${i} is not), as Kafka's generator requires`);
    }
    return out;
  }

  private field(f: RawField, parent: string, depth: number): FieldSchema {
    if (typeof f !== 'object' || f === null || typeof f.name !== 'string' || !FIELD_NAME.test(f.name)) {
      throw new SchemaError(`${parent}: a field without a plain name (${JSON.stringify((f as RawField | null)?.name ?? null)})`);
    }
    const where = `${parent}.${f.name}`;
    if (typeof f.type !== 'string') throw new SchemaError(`${where}: no type`);
    if (typeof f.versions !== 'string') throw new SchemaError(`${where}: no versions`);
    const isArray = f.type.startsWith('[]');
    const element = isArray ? f.type.slice(2) : f.type;
    let primitive: PrimitiveType | null = null;
    let struct: StructSchema | null = null;
    if (PRIMITIVE_TYPES.has(element)) {
      primitive = element as PrimitiveType;
      if (f.fields) throw new SchemaError(`${where}: a ${f.type} field cannot have fields`);
    } else if (/^[A-Z][A-Za-z0-9]*$/.test(element)) {
      struct = this.struct(element, f.fields, where, depth);
    } else {
      throw new SchemaError(`${where}: unknown type ${JSON.stringify(f.type)}`);
    }
    const taggedVersions = optVersions(f.taggedVersions, `${where}.taggedVersions`);
    let tag: number | null = null;
    if (f.tag !== undefined) {
      // Kafka's reader (Jackson) also takes a number written as a string: the 2024 BrokerHeartbeat has "tag": "0".
      const t: unknown = typeof f.tag === 'string' && /^\d{1,10}$/.test(f.tag) ? Number(f.tag) : f.tag;
      if (typeof t !== 'number' || !Number.isInteger(t) || t < 0 || t > 0x7fffffff) throw new SchemaError(`${where}: bad tag ${JSON.stringify(f.tag)}`);
      tag = t;
    }
    if ((tag === null) !== (taggedVersions === null)) throw new SchemaError(`${where}: a tag needs taggedVersions and taggedVersions a tag`);
    return {
      name: f.name,
      jsonName: lowerCamel(f.name),
      type: f.type,
      primitive,
      isArray,
      struct,
      versions: parseVersions(f.versions, `${where}.versions`),
      nullableVersions: optVersions(f.nullableVersions, `${where}.nullableVersions`),
      flexibleVersions: f.flexibleVersions === undefined ? undefined : optVersions(f.flexibleVersions, `${where}.flexibleVersions`),
      taggedVersions,
      tag,
      default: f.default === undefined ? null : String(f.default),
      entityType: typeof f.entityType === 'string' ? f.entityType : null,
      ignorable: f.ignorable === true || f.ignorable === 'true',
      mapKey: f.mapKey === true,
      zeroCopy: f.zeroCopy === true,
      isBytes: primitive === 'bytes',
    };
  }

  private struct(name: string, inline: RawField[] | undefined, where: string, depth: number): StructSchema {
    if (inline) {
      if (!Array.isArray(inline)) throw new SchemaError(`${where}: "fields" must be a list`);
      return { name, fields: this.fields(inline, where, depth + 1) };
    }
    const done = this.built.get(name);
    if (done) return done;
    const common = this.common.get(name);
    if (!common) throw new SchemaError(`${where}: struct ${name} has no fields and is not a common struct of ${this.messageName}`);
    // A struct that contains itself, directly or through others, would have no end on the wire
    // (Kafka's generator cannot generate it either): refused with its chain.
    const at = this.building.indexOf(name);
    if (at >= 0) throw new SchemaError(`${where}: common struct ${name} contains itself (${[...this.building.slice(at), name].join(' -> ')})`);
    this.building.push(name);
    const s: StructSchema = { name, fields: this.fields(common.fields, `${this.messageName}.${name}`, depth + 1) };
    this.building.pop();
    this.built.set(name, s);
    return s;
  }
}

function headerRows(map: unknown, where: string): HeaderVersionRow[] | null {
  if (map === undefined) return null;
  if (typeof map !== 'object' || map === null || Array.isArray(map)) throw new SchemaError(`${where}: headerVersions must be an object`);
  const rows: HeaderVersionRow[] = [];
  for (const [range, header] of Object.entries(map as Record<string, unknown>)) {
    const versions = parseVersions(range, `${where}.headerVersions`);
    if (versions === null || typeof header !== 'string' || !/^\d{1,2}$/.test(header)) {
      throw new SchemaError(`${where}: bad headerVersions row ${JSON.stringify(range)}: ${JSON.stringify(header)}`);
    }
    rows.push({ versions, header: Number(header) });
  }
  rows.sort((a, b) => a.versions.lo - b.versions.lo);
  return rows;
}

function union(a: VersionRange | null, b: VersionRange | null): VersionRange | null {
  if (a === null) return b;
  if (b === null) return a;
  return { lo: Math.min(a.lo, b.lo), hi: Math.max(a.hi, b.hi) };
}

function buildMessage(raw: RawMessage): MessageSchema {
  const where = raw.name;
  const validVersions = parseVersions(raw.validVersions, `${where}.validVersions`);
  const flexibleVersions = optVersions(raw.flexibleVersions ?? 'none', `${where}.flexibleVersions`);
  const layouts: MessageLayout[] = [];
  if (validVersions) {
    layouts.push({ versions: validVersions, flexibleVersions, fields: new Resolver(where, raw.commonStructs).fields(raw.fields, where, 0) });
  }
  let removed: VersionRange | null = null;
  if (raw.removed && raw.legacy) {
    removed = parseVersions(raw.removed.versions, `${where}.removed`);
    if (removed) {
      layouts.push({
        versions: removed,
        flexibleVersions: optVersions(raw.legacy.flexibleVersions, `${where}.legacy.flexibleVersions`),
        fields: new Resolver(where, raw.legacy.commonStructs).fields(raw.legacy.fields, where, 0),
      });
    }
  }
  const defined = union(validVersions, removed) ?? { lo: 0, hi: -1 };
  return {
    name: raw.name,
    type: raw.type as MessageSchema['type'],
    apiKey: raw.type === 'header' ? null : raw.apiKey!,
    validVersions,
    definedVersions: defined,
    flexibleVersions,
    layouts,
    headerVersions: headerRows(raw.headerVersions, where),
    latestVersionUnstable: raw.latestVersionUnstable === true,
    listeners: Array.isArray(raw.listeners) ? raw.listeners.filter((l): l is string => typeof l === 'string') : [],
  };
}

/** The overlay message replaces `base` unless base already defines the overlay's highest version. */
function applyOverlay(messages: RawMessage[], overlay: readonly RawMessage[]): RawMessage[] {
  const byName = new Map<string, number>();
  messages.forEach((m, i) => byName.set(m.name, i));
  const out = messages.slice();
  for (const o of overlay) {
    const i = byName.get(o.name);
    // Only where the loaded schemas have the message: a Kafka without telemetry does not gain it.
    if (i === undefined) continue;
    const base = out[i]!;
    const want = parseVersions(o.validVersions, o.name)!.hi;
    const has = parseVersions(base.validVersions, base.name);
    if (has && has.hi >= want) continue;
    const merged: RawMessage = { ...o };
    if (base.removed && base.legacy) {
      merged.removed = base.removed;
      merged.legacy = base.legacy;
    }
    if (base.headerVersions) merged.headerVersions = base.headerVersions;
    out[i] = merged;
  }
  return out;
}

/**
 * Builds the model from raw messages (every request and response of each API key, and both headers),
 * with the KIP-1313 overlay applied. `errors` are Kafka's error codes.
 */
/**
 * The APIs of a schema set, each resolved at its first use (the built-in set: a run that sees five
 * APIs resolves five of 95). Iterating resolves them all.
 */
class LazyApis implements ReadonlyMap<number, ApiSchema> {
  private readonly done = new Map<number, ApiSchema>();

  constructor(
    private readonly keys_: readonly number[],
    private readonly build: (key: number) => ApiSchema | undefined,
  ) {}

  get size(): number {
    return this.keys_.length;
  }
  get(key: number): ApiSchema | undefined {
    let a = this.done.get(key);
    if (a === undefined) {
      a = this.build(key);
      if (a !== undefined) this.done.set(key, a);
    }
    return a;
  }
  has(key: number): boolean {
    return this.get(key) !== undefined;
  }
  *entries(): MapIterator<[number, ApiSchema]> {
    for (const k of this.keys_) yield [k, this.get(k)!];
  }
  *keys(): MapIterator<number> {
    yield* this.keys_;
  }
  *values(): MapIterator<ApiSchema> {
    for (const k of this.keys_) yield this.get(k)!;
  }
  [Symbol.iterator](): MapIterator<[number, ApiSchema]> {
    return this.entries();
  }
  forEach(f: (value: ApiSchema, key: number, map: ReadonlyMap<number, ApiSchema>) => void): void {
    for (const [k, v] of this.entries()) f(v, k, this);
  }
}

/**
 * Builds the model from raw messages (every request and response of each API key, and both headers),
 * with the KIP-1313 overlay applied. `errors` are Kafka's error codes. With `lazy`, each API is resolved
 * at its first use (for the built-in schemas, whose every message a test resolves); otherwise all at once,
 * so that any problem in a user's schemas is found when they load.
 */
export function resolveSchemas(
  messages: RawMessage[],
  errorRows: readonly (readonly [number, string, string])[],
  source: string,
  lazy = false,
): ProtocolSchemas {
  const all = applyOverlay(messages, KIP1313_OVERLAY);
  const requests = new Map<number, RawMessage>();
  const responses = new Map<number, RawMessage>();
  let requestHeader: MessageSchema | null = null;
  let responseHeader: MessageSchema | null = null;
  for (const raw of all) {
    if (raw.type === 'header') {
      if (raw.name === 'RequestHeader') requestHeader = buildMessage(raw);
      else if (raw.name === 'ResponseHeader') responseHeader = buildMessage(raw);
      continue;
    }
    const into = raw.type === 'request' ? requests : responses;
    if (into.has(raw.apiKey!)) throw new SchemaError(`two ${raw.type} schemas for API key ${raw.apiKey}: ${into.get(raw.apiKey!)!.name} and ${raw.name}`);
    into.set(raw.apiKey!, raw);
  }
  if (!requestHeader || !responseHeader) throw new SchemaError('no RequestHeader or ResponseHeader schema');
  for (const [key, r] of requests) if (!responses.has(key)) throw new SchemaError(`${r.name} has no response schema`);
  for (const [key, r] of responses) if (!requests.has(key)) throw new SchemaError(`${r.name} has no request schema`);
  const build = (key: number): ApiSchema | undefined => {
    const rawRequest = requests.get(key);
    if (!rawRequest) return undefined;
    const request = buildMessage(rawRequest);
    const response = buildMessage(responses.get(key)!);
    const removed = rawRequest.removed && request.layouts.length > (request.validVersions ? 1 : 0) ? request.layouts[request.layouts.length - 1]! : null;
    return {
      key,
      name: request.name.replace(/Request$/, ''),
      request,
      response,
      validVersions: request.validVersions,
      definedVersions: request.definedVersions,
      removed: removed && rawRequest.removed ? { versions: removed.versions, release: rawRequest.removed.release } : null,
      flexibleVersions: request.flexibleVersions,
    };
  };
  const keys = [...requests.keys()].sort((a, b) => a - b);
  const apis: ReadonlyMap<number, ApiSchema> = lazy ? new LazyApis(keys, build) : new Map(keys.map((k) => [k, build(k)!]));
  const errors = new Map<number, ErrorInfo>();
  for (const [code, name, message] of errorRows) errors.set(code, { code, name, message });
  return { source, apis, requestHeader, responseHeader, errors };
}

let builtin: ProtocolSchemas | null = null;

/** The built-in schemas (generated.ts and the overlay), built at the first call and cached. */
export function builtinSchemas(): ProtocolSchemas {
  if (builtin === null) {
    const payload = JSON.parse(GENERATED_SCHEMAS) as { messages: RawMessage[]; errors: [number, string, string][] };
    builtin = resolveSchemas(payload.messages, payload.errors, `built-in: ${GENERATED_SOURCE}; ${OVERLAY_SOURCE}`, true);
  }
  return builtin;
}

// ---------------------------------------------------------------------------------------------------
// --kafka-specs

/** Limits for reading a user's schemas: Kafka's folder is ~200 files of under 30 KB each. */
const MAX_SCHEMA_FILES = 2000;
const MAX_SCHEMA_BYTES = 1 << 20;
const MAX_JAR_BYTES = 256 << 20;

/**
 * Kafka's schemas from a folder of message JSON files (clients/src/main/resources/common/message) or a
 * kafka-clients-*.jar (which holds them as common/message/*.json), with the KIP-1313 overlay on top
 * (each overlay message unless the loaded schemas define its versions). Error codes are not in the
 * schema files (Kafka keeps them in Errors.java): the built-in table serves. Any problem is one
 * SchemaError with a one-line message.
 */
export function loadSchemas(path: string): ProtocolSchemas {
  const st = statOf(path);
  const files: [string, string][] = [];
  if (st.isDirectory()) {
    const names = readNames(path)
      .filter((n) => n.endsWith('.json'))
      .sort();
    if (names.length > MAX_SCHEMA_FILES) throw new SchemaError(`--kafka-specs ${path}: more than ${MAX_SCHEMA_FILES} JSON files`);
    for (const n of names) {
      const p = join(path, n);
      const s = statOf(p);
      if (!s.isFile()) continue;
      if (s.size > MAX_SCHEMA_BYTES) throw new SchemaError(`--kafka-specs ${p}: larger than ${MAX_SCHEMA_BYTES} bytes`);
      files.push([p, readText(p)]);
    }
  } else if (st.isFile()) {
    if (st.size > MAX_JAR_BYTES) throw new SchemaError(`--kafka-specs ${path}: larger than ${MAX_JAR_BYTES >> 20} MiB`);
    const entries = readZipEntries(readBytes(path), `--kafka-specs ${path}`, (name) => /^common\/message\/[^/]+\.json$/.test(name), MAX_SCHEMA_BYTES, MAX_SCHEMA_FILES);
    if (entries.length === 0) throw new SchemaError(`--kafka-specs ${path}: no common/message/*.json in this jar`);
    for (const e of entries) files.push([`${path}!${e.name}`, e.data.toString('utf8')]);
  } else {
    throw new SchemaError(`--kafka-specs ${path}: not a file or folder`);
  }
  const messages: RawMessage[] = [];
  for (const [name, text] of files) {
    const f = readRawFile(`--kafka-specs ${name}`, text);
    if (f) messages.push(f.message);
  }
  if (messages.length === 0) throw new SchemaError(`--kafka-specs ${path}: no Kafka request, response or header schemas there`);
  const source = `--kafka-specs ${basename(path)}; ${OVERLAY_SOURCE}`;
  try {
    return resolveSchemas(messages, [...builtinSchemas().errors.values()].map((e) => [e.code, e.name, e.message] as const), source);
  } catch (e) {
    if (e instanceof SchemaError) throw new SchemaError(`--kafka-specs ${path}: ${e.message}`);
    throw e;
  }
}

/** What a file-system error says in one line: a loop of symbolic links, a missing or unreadable path. */
function fsError(path: string, e: unknown): SchemaError {
  const code = (e as NodeJS.ErrnoException).code;
  const why =
    code === 'ELOOP' ? 'symbolic links loop' : code === 'ENOENT' ? 'no such file or folder' : code === 'EACCES' || code === 'EPERM' ? 'permission denied' : code === 'ENAMETOOLONG' ? 'name too long' : `cannot be read (${code ?? 'error'})`;
  return new SchemaError(`--kafka-specs ${path}: ${why}`);
}

function statOf(path: string): Stats {
  try {
    return statSync(path);
  } catch (e) {
    throw fsError(path, e);
  }
}

function readNames(path: string): string[] {
  try {
    return readdirSync(path);
  } catch (e) {
    throw fsError(path, e);
  }
}

function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    throw fsError(path, e);
  }
}

function readBytes(path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (e) {
    throw fsError(path, e);
  }
}

// ---------------------------------------------------------------------------------------------------
// Questions

export function apiName(schemas: ProtocolSchemas, apiKey: number): string | null {
  return schemas.apis.get(apiKey)?.name ?? null;
}

/** Current Kafka accepts this version. */
export function isValidVersion(schemas: ProtocolSchemas, apiKey: number, version: number): boolean {
  return inRange(schemas.apis.get(apiKey)?.validVersions ?? null, version);
}

/** kcid can decode this version: it is valid or was removed (its layout is kept). */
export function isDefinedVersion(schemas: ProtocolSchemas, apiKey: number, version: number): boolean {
  const api = schemas.apis.get(apiKey);
  return api !== undefined && inRange(api.definedVersions, version);
}

/** The version uses the flexible encoding (KIP-482): compact lengths and tagged fields. */
export function isFlexible(schemas: ProtocolSchemas, apiKey: number, version: number): boolean {
  const api = schemas.apis.get(apiKey);
  if (!api || !inRange(api.definedVersions, version)) return false;
  for (const l of api.request.layouts) if (inRange(l.versions, version)) return inRange(l.flexibleVersions, version);
  return false;
}

function fromRows(rows: readonly HeaderVersionRow[], version: number): number | null {
  for (const r of rows) if (inRange(r.versions, version)) return r.header;
  return null;
}

/**
 * The request header version of a request (null for an API or version the schemas do not define):
 * the schema's `headerVersions` map when it has one, else Kafka's rule (Kafka's message generator,
 * ApiMessageType.requestHeaderVersion): flexible versions use header 2, others header 1, and
 * ControlledShutdown v0 header 0 (it predates ClientId). The only place kcid decides it.
 */
export function requestHeaderVersion(schemas: ProtocolSchemas, apiKey: number, apiVersion: number): number | null {
  const api = schemas.apis.get(apiKey);
  if (!api || !inRange(api.definedVersions, apiVersion)) return null;
  if (api.request.headerVersions) return fromRows(api.request.headerVersions, apiVersion);
  if (apiKey === API_KEY.ControlledShutdown && apiVersion === 0) return 0;
  return isFlexible(schemas, apiKey, apiVersion) ? 2 : 1;
}

/**
 * The response header version of a response: the `headerVersions` map of the response schema when it has
 * one, else Kafka's rule: flexible versions use header 1, others header 0, and ApiVersions responses
 * always header 0 (a client must read them before it knows what the broker speaks).
 */
export function responseHeaderVersion(schemas: ProtocolSchemas, apiKey: number, apiVersion: number): number | null {
  const api = schemas.apis.get(apiKey);
  if (!api || !inRange(api.definedVersions, apiVersion)) return null;
  if (api.response.headerVersions) return fromRows(api.response.headerVersions, apiVersion);
  if (apiKey === API_KEY.ApiVersions) return 0;
  return isFlexible(schemas, apiKey, apiVersion) ? 1 : 0;
}

/**
 * The same schemas with every request's header version remapped (e.g. {@link ACCEPTED_REVISION} in
 * overlay.ts: 2 -> 3), written as a `headerVersions` map into each request schema, so that
 * {@link requestHeaderVersion} answers from data. Schemas that already have a map keep it.
 */
export function withHeaderVersions(schemas: ProtocolSchemas, remap: ReadonlyMap<number, number>, source?: string): ProtocolSchemas {
  const apis = new Map<number, ApiSchema>();
  for (const [key, api] of schemas.apis) {
    if (api.request.headerVersions) {
      apis.set(key, api);
      continue;
    }
    const rows: HeaderVersionRow[] = [];
    for (let v = api.definedVersions.lo; v <= api.definedVersions.hi && v < OPEN; v++) {
      const h = requestHeaderVersion(schemas, key, v)!;
      const header = remap.get(h) ?? h;
      const last = rows[rows.length - 1];
      if (last && last.header === header && last.versions.hi === v - 1) rows[rows.length - 1] = { versions: { lo: last.versions.lo, hi: v }, header };
      else rows.push({ versions: { lo: v, hi: v }, header });
    }
    apis.set(key, { ...api, request: { ...api.request, headerVersions: rows } });
  }
  return { ...schemas, source: source ?? schemas.source, apis };
}

/** Kafka's name of an error code ("UNSUPPORTED_VERSION"), or null for a code Kafka does not define. */
export function errorName(code: number, schemas: ProtocolSchemas = builtinSchemas()): string | null {
  return schemas.errors.get(code)?.name ?? null;
}

/** "UNSUPPORTED_VERSION (35)"; a code Kafka does not define is "UNKNOWN_ERROR_CODE (137)". */
export function errorLabel(code: number, schemas: ProtocolSchemas = builtinSchemas()): string {
  return `${errorName(code, schemas) ?? 'UNKNOWN_ERROR_CODE'} (${code})`;
}
