/**
 * Secrets never leave kcid. The fields that can carry one are derived from the schemas (every bytes
 * field, and the config values Kafka's request logger hides); every version of every message that has
 * one is decoded from random bytes (test/schema/encoder.ts) and written as --bodies writes it (by
 * bodyJson, and by writeBodyJson straight from the wire); and a capture carrying a SASL token, a SCRAM
 * salt and password, and a password config goes through every output format.
 */
import { describe, expect, it } from 'vitest';
import { decodeBody } from '../src/kafka/bodies.js';
import { protocol } from '../src/kafka/protocol.js';
import { bodyJson, HIDDEN, masksByValue, maskQuotedSecrets, secretFields, writeBodyJson } from '../src/kafka/secrets.js';
import { ByteText } from '../src/base/byte-text.js';
import { inRange, layoutFor } from '../src/kafka/schema/model.js';
import { randomMessage } from './schema/encoder.js';
import { compactArray, compactString, concat, int16, int32, int8, taggedFields, uvarint } from './builder/kafka.js';
import { Scenario } from './builder/scenario.js';
import { ID_A, runKcid } from './helpers.js';

const p = protocol();

describe('the secret-carrying fields, from the schemas', () => {
  const fields = secretFields();
  const name = (f: (typeof fields)[number]) => `${p.name(f.apiKey)} ${f.kind} ${f.path}`;

  it('include the ones Kafka hides and every bytes field', () => {
    const names = fields.map(name);
    for (const expected of [
      'SaslAuthenticate request AuthBytes',
      'SaslAuthenticate response AuthBytes',
      'CreateDelegationToken response Hmac',
      'RenewDelegationToken request Hmac',
      'ExpireDelegationToken request Hmac',
      'DescribeDelegationToken response Tokens.Hmac',
      'AlterUserScramCredentials request Upsertions.Salt',
      'AlterUserScramCredentials request Upsertions.SaltedPassword',
      'CreateTopics request Topics.Configs.Value',
      'CreateTopics response Topics.Configs.Value',
      'AlterConfigs request Resources.Configs.Value',
      'IncrementalAlterConfigs request Resources.Configs.Value',
      'Envelope request RequestData',
      'PushTelemetry request Metrics',
    ]) {
      expect(names).toContain(expected);
    }
    expect(fields.filter((f) => f.why === 'config value').map(name).sort()).toEqual([
      'AlterConfigs request Resources.Configs.Value',
      'CreateTopics request Topics.Configs.Value',
      'CreateTopics response Topics.Configs.Value',
      'IncrementalAlterConfigs request Resources.Configs.Value',
    ]);
  });

  it('no version of any message that has one writes its content: bytes as sizes, config values hidden', () => {
    const apis = new Set(fields.map((f) => `${f.apiKey}|${f.kind}`));
    let checked = 0;
    for (const key of apis) {
      const [apiKey, kind] = [Number(key.split('|')[0]), key.split('|')[1] as 'request' | 'response'];
      const api = p.api(apiKey)!;
      const m = kind === 'request' ? api.request : api.response;
      for (const l of m.layouts) {
        for (let v = l.versions.lo; v <= Math.min(l.versions.hi, 200); v++) {
          if (layoutFor(m, v) === null) continue;
          for (let seed = 1; seed <= 3; seed++) {
            const { bytes, value } = randomMessage(m, v, seed * 7919 + v);
            const d = decodeBody(kind, apiKey, v, true, bytes, 0, bytes.length, bytes.length)!;
            const text = bodyJson(kind, apiKey, v, d.body);
            // The wire-to-JSON writer (--bodies' fast path) writes these very bytes.
            const out = new ByteText(16);
            const fast = writeBodyJson(kind, apiKey, v, bytes, 0, bytes.length, out);
            expect(fast, `${m.name} v${v}`).toBe(!masksByValue(kind, apiKey));
            if (fast) expect(out.buf.toString('utf8', 0, out.pos)).toBe(text);
            const json = JSON.parse(text) as unknown;
            // Walk the expected value with the schema: every secret field in the JSON is a size, null, or hidden.
            const walk = (fs: readonly import('../src/kafka/schema/model.js').FieldSchema[], exp: Record<string, unknown>, got: Record<string, unknown>, path: string): void => {
              for (const f of fs) {
                if (!inRange(f.versions, v) || !(f.name in exp)) continue;
                const here = path === '' ? f.name : `${path}.${f.name}`;
                const e = exp[f.name];
                if (f.isBytes) {
                  expect(got[`${f.jsonName}SizeInBytes`] ?? got[f.jsonName] ?? null, `${m.name} v${v} ${here}`).toSatisfy((x: unknown) => x === null || typeof x === 'number');
                  checked++;
                } else if (fields.some((s) => s.apiKey === apiKey && s.kind === kind && s.path === here && s.why === 'config value')) {
                  expect(got[f.jsonName]).toBe(e === null ? null : HIDDEN);
                  checked++;
                } else if (f.struct !== null && e !== null && e !== undefined) {
                  const es = f.isArray ? (e as Record<string, unknown>[]) : [e as Record<string, unknown>];
                  const gs = f.isArray ? (got[f.jsonName] as Record<string, unknown>[]) : [got[f.jsonName] as Record<string, unknown>];
                  es.forEach((x, i) => walk(f.struct!.fields, x, gs[i]!, here));
                }
              }
            };
            walk(layoutFor(m, v)!.fields, value, json as Record<string, unknown>, '');
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(200);
  });
});

describe('a capture with secrets, through every output format', () => {
  const TOKEN = 'SECRET-SASL-TOKEN-0123456789';
  const PASSWORD = 'hunter2-keystore-password';
  const SALT = 'SALT-SALT-SALT-SALT';

  function capture(): string {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    // SaslAuthenticate v2 (flexible): AuthBytes as compact bytes, no tags; answered with the token echoed.
    const token = new TextEncoder().encode(TOKEN);
    const corr = c.request({ apiKey: 36, apiVersion: 2, clientId: 'app', clientInstanceId: ID_A, body: concat(uvarint(token.length + 1), token, taggedFields()) });
    // SaslAuthenticate v2 response: ErrorCode, ErrorMessage null, AuthBytes (the token again), SessionLifetimeMs, tags.
    c.respond(corr, concat(int16(0), compactString(null), uvarint(token.length + 1), token, new Uint8Array(8), taggedFields()));
    // CreateTopics v5: Topics [t: NumPartitions 1, ReplicationFactor 1, Assignments [], Configs [ssl.keystore.password = PASSWORD]], TimeoutMs, ValidateOnly.
    const config = concat(compactString('ssl.keystore.password'), compactString(PASSWORD), taggedFields());
    const topic = concat(compactString('t'), int32(1), int16(1), compactArray([], int8), compactArray([config], (x) => x), taggedFields());
    c.request({ apiKey: 19, apiVersion: 5, clientInstanceId: ID_A, body: concat(compactArray([topic], (x) => x), int32(30000), int8(0), taggedFields()) });
    // AlterUserScramCredentials v0: Deletions [], Upsertions [u: Name, Mechanism, Iterations, Salt, SaltedPassword], tags.
    const salt = new TextEncoder().encode(SALT);
    const upsert = concat(compactString('alice'), int8(1), int32(4096), uvarint(salt.length + 1), salt, uvarint(salt.length + 1), salt, taggedFields());
    c.request({ apiKey: 51, apiVersion: 0, clientInstanceId: ID_A, body: concat(compactArray([], int8), compactArray([upsert], (x) => x), taggedFields()) });
    return s.file();
  }

  it('no format shows the token, the salt or the password', async () => {
    const file = capture();
    const outputs: string[] = [];
    for (const args of [
      ['requests', file, '--bodies', '--format', 'ndjson'],
      ['requests', file, '--bodies'],
      ['requests', file, '--format', 'ndjson'],
      ['clients', file, '--format', 'json'],
      ...['table', 'json', 'ndjson', 'junit', 'sarif', 'markdown', 'summary-json'].map((f) => ['analyze', file, '--format', f]),
    ]) {
      const r = await runKcid(args);
      expect(r.code, args.join(' ')).toBeLessThan(2);
      outputs.push(r.stdout + r.stderr);
    }
    for (const out of outputs) {
      for (const secret of [TOKEN, PASSWORD, SALT, Buffer.from(TOKEN).toString('base64'), Buffer.from(SALT).toString('base64'), Buffer.from(TOKEN).toString('hex')]) {
        expect(out).not.toContain(secret);
      }
    }
    const rows = outputs[0]!.trim().split('\n').map((l) => JSON.parse(l) as { request: Record<string, unknown> });
    expect(rows[0]!.request).toEqual({ authBytesSizeInBytes: TOKEN.length });
    expect(JSON.stringify(rows[1]!.request)).toContain('"value":"[hidden]"');
  });
});
