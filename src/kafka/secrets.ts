/**
 * What never leaves kcid: the fields of Kafka's messages that can carry a secret.
 *
 * - Every `bytes` field is shown as its size only (schema/json.ts writes `<name>SizeInBytes`; the
 *   interpreter never even keeps the content): SASL tokens (SaslAuthenticate AuthBytes), delegation
 *   token HMACs (CreateDelegationToken, Renew/Expire/DescribeDelegationToken Hmac), SCRAM salts and
 *   salted passwords (AlterUserScramCredentials), forwarded requests (Envelope), group metadata.
 * - What Kafka's own request logger hides as well (RequestChannel's loggable request, KIP-673): the
 *   config values of CreateTopics, AlterConfigs and IncrementalAlterConfigs, which may be passwords
 *   (ssl.keystore.password, sasl.jaas.config). They are written as Kafka writes a hidden password,
 *   "[hidden]" (org.apache.kafka.common.config.types.Password.HIDDEN).
 * - Config values the message itself marks sensitive: a DescribeConfigs (or CreateTopics) result whose
 *   IsSensitive is true has its Value and its synonyms' values hidden; and, as a second line of defence
 *   for a broker or proxy that does not set the flag, any config value whose name looks like a secret
 *   (`*password*`, `*jaas*`, `*secret*`, `ssl.keystore.key`, see {@link sensitiveConfigName}).
 * - Secrets quoted back: a SaslAuthenticate response's ErrorMessage may quote the client's token
 *   (real brokers send null or a plain message, other brokers and proxies may not): bearer tokens,
 *   JWTs and long opaque runs in it are hidden ({@link maskQuotedSecrets}); `kcid show`, which holds a
 *   connection's bytes, also hides every token the connection sent wherever a later message quotes it.
 */
import { API_KEY, protocol, type Protocol } from './protocol.js';
import { toKafkaJson } from './schema/json.js';
import { inRange, layoutFor, type FieldSchema } from './schema/model.js';
import type { Struct, Value } from './schema/interpreter.js';
import { wireJsonWriter, type WireJsonWriter } from './schema/wire-json.js';
import type { ByteText } from '../base/byte-text.js';

/** Kafka's text for a hidden password. */
export const HIDDEN = '[hidden]';

/** String fields hidden by path (struct names joined by dots, no indices), per API, in requests and responses. */
export const HIDDEN_STRING_FIELDS: ReadonlyMap<number, readonly string[]> = new Map([
  [API_KEY.CreateTopics, ['Topics.Configs.Value']],
  [API_KEY.AlterConfigs, ['Resources.Configs.Value']],
  [API_KEY.IncrementalAlterConfigs, ['Resources.Configs.Value']],
]);

const INDEX = /\[\d+\]/g;

/** HIDDEN_STRING_FIELDS as toKafkaJson replacements: each path written as "[hidden]". */
const HIDDEN_JSON: ReadonlyMap<number, ReadonlyMap<string, string>> = new Map(
  [...HIDDEN_STRING_FIELDS].map(([key, paths]) => [key, new Map(paths.map((path) => [path, JSON.stringify(HIDDEN)]))]),
);

export function isHiddenString(apiKey: number, path: string): boolean {
  const hidden = HIDDEN_STRING_FIELDS.get(apiKey);
  return hidden !== undefined && hidden.includes(path.replace(INDEX, ''));
}

/** The APIs whose bodies carry configs (a struct with a Name and a string Value, maybe an IsSensitive flag). */
export const CONFIG_APIS: ReadonlySet<number> = new Set([API_KEY.CreateTopics, API_KEY.DescribeConfigs, API_KEY.AlterConfigs, API_KEY.IncrementalAlterConfigs]);

/** Config names whose values are secrets whatever a flag says: Kafka's PASSWORD-type configs and their kin. */
const SENSITIVE_NAME = /password|jaas|secret|^ssl\.keystore\.key$/i;

export function sensitiveConfigName(name: string | null | undefined): boolean {
  return typeof name === 'string' && SENSITIVE_NAME.test(name);
}

/**
 * Is a config struct's Value hidden? `path` is the Value's path (indices allowed), `name` the struct's
 * Name, `isSensitive` its IsSensitive flag (null when it has none), `parentSensitive` true for a synonym
 * of a config that is hidden.
 */
export function isSensitiveConfig(apiKey: number, path: string, name: string | null | undefined, isSensitive: boolean | null | undefined, parentSensitive = false): boolean {
  if (isHiddenString(apiKey, path)) return true;
  if (!CONFIG_APIS.has(apiKey)) return false;
  return isSensitive === true || parentSensitive || sensitiveConfigName(name);
}

/** Opaque runs this long or longer in a message quoting a secret are hidden (a token, a key, a hash). */
const OPAQUE = /(?:bearer\s+|auth=|token[=:]\s*|password[=:]\s*)[^\s,;"'\x01]+|[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*|[A-Za-z0-9+/_=-]{32,}/gi;

/**
 * `text` with every secret it quotes replaced by "[hidden]": each of `known` (tokens the connection
 * sent), then what looks like one (`Bearer x`, `auth=x`, a JWT, a run of 32 or more base64 characters).
 */
export function maskQuotedSecrets(text: string, known: readonly string[] = []): string {
  let out = text;
  for (const k of known) if (k.length >= 4 && out.includes(k)) out = out.split(k).join(HIDDEN);
  return out.replace(OPAQUE, (m) => {
    const prefix = /^(bearer\s+|auth=|token[=:]\s*|password[=:]\s*)/i.exec(m);
    return prefix === null ? HIDDEN : prefix[0] + HIDDEN;
  });
}

/**
 * The secrets inside a SASL token (SaslAuthenticate AuthBytes, or a SASL/PLAIN or OAUTHBEARER
 * initial response): the whole token as text, a bearer token (RFC 7628 `auth=Bearer x`), a PLAIN
 * password (RFC 4616 authzid NUL authcid NUL passwd), a SCRAM proof (RFC 5802 `p=`).
 */
export function tokensOf(auth: Uint8Array): string[] {
  const text = Buffer.from(auth.buffer, auth.byteOffset, auth.byteLength).toString('latin1');
  const out = new Set<string>();
  if (text.length >= 8) out.add(text);
  for (const m of text.matchAll(/auth=Bearer\s+([^\x01]+)/gi)) out.add(m[1]!);
  const plain = text.split('\0');
  if (plain.length === 3 && plain[2]!.length > 0) out.add(plain[2]!);
  for (const m of text.matchAll(/(?:^|,)p=([^,]+)/g)) out.add(m[1]!);
  return [...out].filter((t) => t.length >= 4).sort((a, b) => b.length - a.length);
}

/** Does bodyJson mask this body by its values (so the wire-to-JSON fast path must not write it)? */
export function masksByValue(kind: 'request' | 'response', apiKey: number): boolean {
  // The other config APIs' values are hidden by path whatever their flag or name (HIDDEN_STRING_FIELDS).
  return kind === 'response' && (apiKey === API_KEY.DescribeConfigs || apiKey === API_KEY.SaslAuthenticate);
}

/**
 * The body with its sensitive config values (by flag or by name) written as "[hidden]", and a
 * SaslAuthenticate response's ErrorMessage masked: a copy of the structs on the way, never a change to `body`.
 */
export function maskSensitive(kind: 'request' | 'response', apiKey: number, body: Struct): Struct {
  if (!masksByValue(kind, apiKey)) return body;
  if (apiKey === API_KEY.SaslAuthenticate) {
    const msg = body['ErrorMessage'];
    if (typeof msg !== 'string') return body;
    const masked = maskQuotedSecrets(msg);
    return masked === msg ? body : copyWith(body, 'ErrorMessage', masked);
  }
  const walk = (s: Struct, path: string, parentSensitive: boolean, depth: number): Struct => {
    if (depth > 64) return s;
    let out = s;
    const value = s['Value'];
    const here = path === '' ? 'Value' : `${path}.Value`;
    const sensitive = typeof value === 'string' || value === null ? isSensitiveConfig(apiKey, here, s['Name'] as string | null, s['IsSensitive'] as boolean | null, parentSensitive) : false;
    if (sensitive && typeof value === 'string') out = copyWith(out, 'Value', HIDDEN);
    for (const key of Object.keys(s)) {
      const v = s[key];
      if (!Array.isArray(v)) {
        if (v !== null && typeof v === 'object' && !(v instanceof Uint8Array) && !('size' in v && Object.keys(v).length === 1)) {
          const w = walk(v as Struct, path === '' ? key : `${path}.${key}`, sensitive, depth + 1);
          if (w !== v) out = copyWith(out, key, w);
        }
        continue;
      }
      let changed: Value[] | null = null;
      for (let i = 0; i < v.length; i++) {
        const e = v[i];
        if (e === null || typeof e !== 'object' || Array.isArray(e) || e instanceof Uint8Array) continue;
        const w = walk(e as Struct, path === '' ? key : `${path}.${key}`, sensitive, depth + 1);
        if (w !== e) (changed ??= [...(v as Value[])])[i] = w;
      }
      if (changed !== null) out = copyWith(out, key, changed);
    }
    return out;
  };
  return walk(body, '', false, 0);
}

function copyWith(s: Struct, key: string, value: Value): Struct {
  const c = Object.create(null) as Struct;
  for (const k of Object.keys(s)) c[k] = s[k];
  c[key] = value;
  return c;
}

/**
 * A decoded body as Kafka's JSON converters write it (lowerCamelCase names, UUIDs in base64, records
 * and bytes as sizes), with the hidden strings replaced by "[hidden]".
 */
export function bodyJson(kind: 'request' | 'response', apiKey: number, version: number, body: Struct, p: Protocol = protocol()): string {
  const api = p.api(apiKey);
  if (api === undefined) return 'null';
  const m = kind === 'request' ? api.request : api.response;
  if (layoutFor(m, version) === null) return 'null';
  return toKafkaJson(maskSensitive(kind, apiKey, body), m, version, { replace: HIDDEN_JSON.get(apiKey) });
}

/** The wire-to-JSON writers of one protocol, by kind, key and version (null: the fast path does not take it). */
interface JsonWriters {
  readonly request: (WireJsonWriter | null)[][];
  readonly response: (WireJsonWriter | null)[][];
}

/**
 * bodyJson's bytes, from the wire (schema/wire-json.ts): true when written; false when this fast path
 * does not take the body (out.pos back where it was). When true, the bytes are exactly those of
 * bodyJson over decodeBody's full decode of buf[start, end) (a whole body: end is the frame's end),
 * UTF-8 encoded; false for every body decodeBody refuses, and for those the writer does not take.
 */
export function writeBodyJson(kind: 'request' | 'response', apiKey: number, version: number, buf: Uint8Array, start: number, end: number, out: ByteText, p: Protocol = protocol()): boolean {
  const all = (p.jsonWriters ??= { request: [], response: [] } satisfies JsonWriters) as JsonWriters;
  const byKey = kind === 'request' ? all.request : all.response;
  let w = byKey[apiKey]?.[version];
  if (w === undefined) {
    // Only what the schemas define is cached (a capture may name any key and version).
    if (!p.isDefined(apiKey, version)) return false;
    w = bodyWriter(kind, apiKey, version, p);
    (byKey[apiKey] ??= [])[version] = w;
  }
  return w !== null && w(buf, start, end, out);
}

/** The writer of one body version, as decodeBody decodes it and bodyJson writes it; null when there is none. */
function bodyWriter(kind: 'request' | 'response', apiKey: number, version: number, p: Protocol): WireJsonWriter | null {
  // writeBodyJson asks only for versions the protocol defines, as decodeBody decodes only those.
  const api = p.api(apiKey);
  if (api === undefined) return null;
  const m = kind === 'request' ? api.request : api.response;
  // Values hidden by what the body says (IsSensitive, a config's name, a quoted token) are bodyJson's.
  if (masksByValue(kind, apiKey)) return null;
  const replace = HIDDEN_JSON.get(apiKey);
  // ApiVersions (KIP-511) as decodeBody reads it: the version asked, whatever its ErrorCode; a body that
  // fails that way is not written here, and decodeBody reads it again as v0.
  return wireJsonWriter(m, version, replace);
}

/** One schema field that can carry a secret: an API, request or response, and the field's path. */
export interface SecretField {
  apiKey: number;
  kind: 'request' | 'response';
  /** "Topics.Configs.Value". */
  path: string;
  why: 'bytes' | 'config value';
}

/** Every field of every schema that can carry a secret (the bytes fields and the hidden strings), each once. */
export function secretFields(p: Protocol = protocol()): SecretField[] {
  const out: SecretField[] = [];
  const seen = new Set<string>();
  for (const api of p.apis) {
    for (const kind of ['request', 'response'] as const) {
      const m = kind === 'request' ? api.request : api.response;
      const walk = (fields: readonly FieldSchema[], prefix: string, version: number): void => {
        for (const f of fields) {
          if (!inRange(f.versions, version)) continue;
          const path = prefix + f.name;
          const why = f.isBytes ? 'bytes' : f.primitive === 'string' && isHiddenString(api.key, path) ? 'config value' : null;
          const id = `${api.key}|${kind}|${path}`;
          if (why !== null && !seen.has(id)) {
            seen.add(id);
            out.push({ apiKey: api.key, kind, path, why });
          }
          if (f.struct !== null) walk(f.struct.fields, `${path}.`, version);
        }
      };
      for (const l of m.layouts) for (let v = l.versions.lo; v <= Math.min(l.versions.hi, 0x7ffe); v++) walk(l.fields, '', v);
    }
  }
  return out;
}
