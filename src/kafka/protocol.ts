/**
 * The Kafka protocol kcid decodes with: the schemas (built in, or --kafka-specs) and, worked out once
 * from them, the answers the hot path asks for every frame (an API's name, whether a version is
 * defined, which header version it uses), as arrays indexed by key and version.
 *
 * One protocol is active per process (and per worker thread): {@link useProtocol} sets it before a
 * capture is read (the CLI from --kafka-specs and --kip-1313, a worker from its job), and every stage
 * reads names and layouts from {@link protocol}. Nothing here types an API key, a version or an offset.
 */
import { API_KEY, builtinSchemas, errorName as schemaErrorName, loadSchemas, requestHeaderVersion, responseHeaderVersion, withHeaderVersions } from './schema/registry.js';
import { formatVersions, inRange, layoutFor, OPEN, type ApiSchema, type ErrorInfo, type ProtocolSchemas } from './schema/model.js';
import { ACCEPTED_REVISION, INSTANCE_ID_PROMISE } from './schema/overlay.js';

export { API_KEY };
export { SchemaError } from './schema/model.js';

/** Which KIP-1313 revision the request headers are read by: the voting one (default) or the accepted one (header v3). */
export type Kip1313Revision = 'voting' | 'accepted';

const NONE = -1;

export class Protocol {
  private allApis: readonly ApiSchema[] | null = null;
  private readonly names: (string | null | undefined)[] = [];
  /** Per key, made at the key's first use: request header version by request version (NONE: not defined). */
  private readonly requestHeaders: (Int8Array | null | undefined)[] = [];
  private readonly responseHeaders: (Int8Array | null | undefined)[] = [];
  /** Per key: highest defined version, when the API's flexible versions are open ("12+"), else NONE. */
  private readonly openFlexible: number[] = [];
  /** Header versions whose schema has a ClientInstanceId field. */
  private readonly idHeaders = new Set<number>();
  /** The header decoder's compiled layouts of these schemas (headers.ts fills it on first use). */
  headerPlans: unknown = null;
  /** The body decoders of these schemas (bodies.ts fills it on first use). */
  bodyPlans: unknown = null;
  /** The bodies' wire-to-JSON writers of these schemas (secrets.ts fills it on first use). */
  jsonWriters: unknown = null;
  private readonly errorCodes = new Map<string, number>();
  /** errorLabel's answers, made once per code (every response row asks). */
  private readonly errorLabels = new Map<number, string>();

  /**
   * Nothing per API is worked out here: the built-in schemas resolve an API at its first use, and a
   * capture uses a handful of the 95 (resolving them all cost a quarter of a second of start-up).
   */
  constructor(readonly schemas: ProtocolSchemas) {
    for (const e of schemas.errors.values()) this.errorCodes.set(e.name, e.code);
    const h = schemas.requestHeader;
    for (let v = h.definedVersions.lo; v <= h.definedVersions.hi; v++) {
      for (const l of h.layouts) {
        if (!inRange(l.versions, v)) continue;
        if (l.fields.some((f) => f.name === 'ClientInstanceId' && inRange(f.versions, v))) this.idHeaders.add(v);
      }
    }
  }

  /** Every API, by ascending key (resolves them all: for option parsing and tests, not the hot path). */
  get apis(): readonly ApiSchema[] {
    return (this.allApis ??= [...this.schemas.apis.values()].sort((a, b) => a.key - b.key));
  }

  /** The header version tables of one key, made at its first use (null for a key the schemas lack). */
  private tables(key: number): Int8Array | null {
    const known = this.requestHeaders[key];
    if (known !== undefined) return known;
    if (!Number.isInteger(key) || key < 0 || key > 0x7fff) return null;
    const api = this.schemas.apis.get(key);
    if (api === undefined) {
      this.requestHeaders[key] = null;
      return null;
    }
    const hi = Math.min(api.definedVersions.hi, OPEN - 1);
    const req = new Int8Array(Math.max(hi + 1, 0)).fill(NONE);
    const res = new Int8Array(Math.max(hi + 1, 0)).fill(NONE);
    for (let v = api.definedVersions.lo; v <= hi; v++) {
      req[v] = requestHeaderVersion(this.schemas, key, v) ?? NONE;
      res[v] = responseHeaderVersion(this.schemas, key, v) ?? NONE;
    }
    this.requestHeaders[key] = req;
    this.responseHeaders[key] = res;
    this.openFlexible[key] = api.flexibleVersions !== null && api.flexibleVersions.hi === OPEN ? hi : NONE;
    return req;
  }

  api(key: number): ApiSchema | undefined {
    return this.schemas.apis.get(key);
  }

  /** 'Produce', or 'Unknown(123)' for a key the schemas do not define. */
  name(key: number): string {
    let n = this.names[key];
    if (n === undefined) {
      n = Number.isInteger(key) && key >= 0 && key <= 0x7fff ? (this.schemas.apis.get(key)?.name ?? null) : null;
      if (Number.isInteger(key) && key >= 0 && key <= 0x7fff) this.names[key] = n;
    }
    return n ?? `Unknown(${key})`;
  }

  /** "Produce v9". */
  label(key: number, version: number): string {
    return `${this.name(key)} v${version}`;
  }

  /** The schemas define this version (current Kafka accepts it, or it was removed but its layout is kept). */
  isDefined(key: number, version: number): boolean {
    const t = this.tables(key);
    return t !== null && version >= 0 && version < t.length && t[version] !== NONE;
  }

  /** Current Kafka accepts this version. */
  isValid(key: number, version: number): boolean {
    return inRange(this.api(key)?.validVersions ?? null, version);
  }

  /** The request header version of a defined version, else null. */
  requestHeaderVersion(key: number, version: number): number | null {
    const t = this.tables(key);
    if (t === null || version < 0 || version >= t.length) return null;
    const h = t[version]!;
    return h === NONE ? null : h;
  }

  /**
   * Like requestHeaderVersion, but a version above the schemas of an API whose flexible versions are
   * open ("12+") uses the header of the highest defined version: Kafka never makes a flexible API
   * inflexible again, so a newer client's tag 0 is still read.
   */
  inferredRequestHeaderVersion(key: number, version: number): number | null {
    const known = this.requestHeaderVersion(key, version);
    if (known !== null) return known;
    if (this.tables(key) === null) return null;
    const hi = this.openFlexible[key];
    if (hi === undefined || hi === NONE || version <= hi) return null;
    return this.requestHeaderVersion(key, hi);
  }

  responseHeaderVersion(key: number, version: number): number | null {
    if (this.tables(key) === null) return null;
    const t = this.responseHeaders[key]!;
    if (version < 0 || version >= t.length) return null;
    const h = t[version]!;
    return h === NONE ? null : h;
  }

  /** The body of this request (or response) version has a top-level field of this name. */
  bodyHasField(kind: 'request' | 'response', key: number, version: number, name: string): boolean {
    const api = this.api(key);
    if (api === undefined) return false;
    const layout = layoutFor(kind === 'request' ? api.request : api.response, version);
    return layout !== null && layout.fields.some((f) => f.name === name && inRange(f.versions, version));
  }

  /** This request header version has a ClientInstanceId field (KIP-1313). */
  headerCarriesInstanceId(headerVersion: number | null): boolean {
    return headerVersion !== null && this.idHeaders.has(headerVersion);
  }

  error(code: number): ErrorInfo | undefined {
    return this.schemas.errors.get(code);
  }

  /** The code of a Kafka error by its name ("INVALID_REQUEST" is 42); undefined for a name Kafka does not have. */
  errorCode(name: string): number | undefined {
    return this.errorCodes.get(name);
  }

  /** "UNSUPPORTED_VERSION (35)"; a code Kafka does not define is "unknown error code (137)". */
  errorLabel(code: number): string {
    let label = this.errorLabels.get(code);
    if (label === undefined) {
      const name = schemaErrorName(code, this.schemas);
      label = name === null ? `unknown error code (${code})` : `${name} (${code})`;
      // At most 65,536 (an int16 each), whatever the capture holds.
      this.errorLabels.set(code, label);
    }
    return label;
  }

  /** "3-13" (what current Kafka accepts), "none". */
  validRange(key: number): string {
    return formatVersions(this.api(key)?.validVersions ?? null);
  }
}

/**
 * The header version's promise about ClientInstanceId (overlay.ts): the voting revision's v2 carries it
 * on every request, the accepted revision's v3 on the connection's first request only.
 */
export function carriesInstanceIdOnEveryRequest(headerVersion: number | null): boolean {
  return headerVersion !== null && INSTANCE_ID_PROMISE.get(headerVersion) === 'every-request';
}

export function carriesInstanceIdOnFirstRequestOnly(headerVersion: number | null): boolean {
  return headerVersion !== null && INSTANCE_ID_PROMISE.get(headerVersion) === 'first-request-only';
}

let active: Protocol | null = null;
let builtin: Protocol | null = null;

/** The built-in protocol (Kafka trunk of August 2026 with the KIP-1313 overlay, voting revision). */
export function builtinProtocol(): Protocol {
  return (builtin ??= new Protocol(builtinSchemas()));
}

/** The active protocol: the built-in one unless {@link useProtocol} set another. */
export function protocol(): Protocol {
  return active ?? builtinProtocol();
}

export function useProtocol(p: Protocol | null): void {
  active = p;
}

export interface ProtocolOptions {
  /** --kafka-specs: a folder of Kafka's message schemas or a kafka-clients jar. */
  kafkaSpecs?: string | null;
  /** --kip-1313: read flexible request headers as the accepted revision's v3. */
  kip1313?: Kip1313Revision;
}

let activeKey = '';

/**
 * Makes the protocol these options ask for the active one (a no-op when it already is): the CLI
 * before reading captures, each worker thread for its jobs. Throws SchemaError for a bad --kafka-specs.
 */
export function activateProtocol(opts: ProtocolOptions): Protocol {
  const key = `${opts.kafkaSpecs ?? ''}\u0000${opts.kip1313 ?? 'voting'}`;
  if (key !== activeKey || active === null) {
    const p = protocolFor(opts);
    active = p;
    activeKey = key;
  }
  return active;
}

/** The protocol these options ask for. Throws SchemaError (one line) for a --kafka-specs path that holds no usable schemas. */
export function protocolFor(opts: ProtocolOptions): Protocol {
  const specs = opts.kafkaSpecs ?? null;
  let schemas = specs === null ? null : loadSchemas(specs);
  if (opts.kip1313 === 'accepted') {
    const base = schemas ?? builtinSchemas();
    schemas = withHeaderVersions(base, ACCEPTED_REVISION, `${base.source}; KIP-1313 accepted revision (request header v3)`);
  }
  return schemas === null ? builtinProtocol() : new Protocol(schemas);
}

// The questions every stage asks, of the active protocol.

export const apiName = (key: number): string => protocol().name(key);
export const apiLabel = (key: number, version: number): string => protocol().label(key, version);
export const errorLabel = (code: number): string => protocol().errorLabel(code);
/** Kafka's name of an error code ("UNSUPPORTED_VERSION"); a code Kafka does not define is "UNKNOWN_ERROR_CODE(137)". */
export const errorName = (code: number): string => protocol().error(code)?.name ?? `UNKNOWN_ERROR_CODE(${code})`;
