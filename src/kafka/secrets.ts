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
 */
import { API_KEY, protocol, type Protocol } from './protocol.js';
import { toKafkaJson } from './schema/json.js';
import { inRange, layoutFor, type FieldSchema } from './schema/model.js';
import type { Struct } from './schema/interpreter.js';

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

/**
 * A decoded body as Kafka's JSON converters write it (lowerCamelCase names, UUIDs in base64, records
 * and bytes as sizes), with the hidden strings replaced by "[hidden]".
 */
export function bodyJson(kind: 'request' | 'response', apiKey: number, version: number, body: Struct, p: Protocol = protocol()): string {
  const api = p.api(apiKey);
  if (api === undefined) return 'null';
  const m = kind === 'request' ? api.request : api.response;
  if (layoutFor(m, version) === null) return 'null';
  return toKafkaJson(body, m, version, { replace: HIDDEN_JSON.get(apiKey) });
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
