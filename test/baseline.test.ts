/**
 * Baselines: fingerprints that survive a new capture of the same traffic (other frame numbers,
 * times, ports, correlation IDs, brokers, broker-assigned IDs), the baseline file and its errors,
 * and what applying one leaves and counts.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  applyBaseline,
  BaselineError,
  fingerprint,
  fingerprintAll,
  Fingerprinter,
  normalizeMessage,
  parseBaseline,
  writeBaseline,
  type Baseline,
} from '../src/analysis/baseline.js';
import type { Report } from '../src/analysis/report.js';
import { TELEMETRY_RULES } from '../src/analysis/rules/index.js';
import { renderJson } from '../src/report/json.js';
import { summaryLine } from '../src/report/table.js';
import { removeTmpFiles } from './builder/capture.js';
import {
  apiVersionsRequestBody,
  consumerGroupHeartbeatRequestBody,
  errorCodeResponseBody,
  getTelemetrySubscriptionsRequestBody,
  getTelemetrySubscriptionsResponseBody,
  uuidFromHex,
} from './builder/kafka.js';
import { Scenario } from './builder/scenario.js';
import { buildKip1313Mix } from './fixtures/kip1313-mix.js';
import { analyzeFiles, brief, checkGolden, ID_A, ID_B, ID_B_B64, ID_C } from './helpers.js';

afterAll(removeTmpFiles);

const MIX = 'fixtures/kip1313-mix.pcapng';
interface Variant {
  startSec: number;
  /** Client ports start here. */
  port: number;
  /** First correlation ID of each connection. */
  corr: number;
  broker: string;
  /** The ID the (old) broker assigns, and the group member ID it hands out: new on every run. */
  assigned: Uint8Array;
  memberId: string;
  /** A clean client first, so every later frame number moves. */
  noise: boolean;
  /** The KIP-1313 client's instance ID. */
  instance?: Uint8Array;
  /** The KIP-1313 client's ClientId (default payments-api). */
  clientId?: string;
}

function gtsV0Response(assigned: Uint8Array): Uint8Array {
  return getTelemetrySubscriptionsResponseBody(0, {
    throttleTimeMs: 0,
    errorCode: 0,
    clientInstanceId: assigned,
    subscriptionId: 7,
    acceptedCompressionTypes: [],
    pushIntervalMs: 30000,
    telemetryMaxBytes: 1024,
    deltaTemporality: true,
    requestedMetrics: [],
  });
}

const OK = errorCodeResponseBody({ errorCode: 0, flexible: false });

/**
 * The same client behaviour, captured on another run: a KIP-1313 client that repeats its ClientId,
 * asks for a telemetry ID although it has one (the broker accepts and assigns one), and whose
 * member ID is not its instance ID; a TLS client on the Kafka port.
 */
function traffic(v: Variant): Scenario {
  const s = new Scenario(v.startSec);
  const id = v.instance ?? ID_A;
  if (v.noise) {
    const clean = s.connect({ client: `10.2.0.99:${v.port + 50}`, broker: v.broker });
    clean.respond(clean.request({ apiKey: 18, apiVersion: 4, clientId: 'clean', clientInstanceId: ID_C, body: apiVersionsRequestBody({ softwareName: 'x', softwareVersion: '1' }) }), OK);
  }
  const c = s.connect({ client: `10.2.0.24:${v.port}`, broker: v.broker });
  c.respond(
    c.request({ apiKey: 18, apiVersion: 4, correlationId: v.corr, clientId: v.clientId ?? 'payments-api', clientInstanceId: id, body: apiVersionsRequestBody({ softwareName: 'java', softwareVersion: '4.3.0' }) }),
    OK,
  );
  c.respond(
    c.request({ apiKey: 71, apiVersion: 0, clientId: v.clientId ?? 'payments-api', clientInstanceId: id, body: getTelemetrySubscriptionsRequestBody(0, new Uint8Array(16)) }),
    gtsV0Response(v.assigned),
  );
  c.request({ apiKey: 68, apiVersion: 0, clientInstanceId: id, body: consumerGroupHeartbeatRequestBody(0, { groupId: 'g', memberId: v.memberId, memberEpoch: 3 }) });
  const tls = s.connect({ client: `10.2.0.29:${v.port + 1}`, broker: v.broker });
  tls.clientBytes(new Uint8Array([0x16, 0x03, 0x01, 0x00, 0x2a, 0x01, 0x00, 0x00, 0x26, 0x03, 0x03, ...new Array(38).fill(0x5a)]));
  for (const conn of [c, tls]) conn.close();
  return s;
}

const RUN_1: Variant = {
  startSec: 1_764_547_200,
  port: 43001,
  corr: 1,
  broker: '10.1.0.12:9092',
  assigned: uuidFromHex('5c4d3e2f-1a0b-4c9d-8e7f-6a5b4c3d2e1f'),
  memberId: 'Tq3nWZ0bR1ubfIX6i9-Dfw',
  noise: false,
};
const RUN_2: Variant = {
  startSec: 1_767_225_600,
  port: 51234,
  corr: 900,
  broker: '10.1.0.13:9093',
  assigned: uuidFromHex('a0b1c2d3-e4f5-4a6b-8c7d-9e0f1a2b3c4d'),
  memberId: 'ERERESIiIiIzMzMzRERERA',
  noise: true,
};

async function analyzeTraffic(v: Variant): Promise<Report> {
  return analyzeFiles([traffic(v).file()], { kafkaPorts: new Set([9092, 9093]) });
}

describe('normalizeMessage', () => {
  it.each([
    ['frame references', 'with a header ID (frame 44) with error code 0, not INVALID_REQUEST (42)', 'with a header ID (frame #) with error code #, not INVALID_REQUEST (#)'],
    ['byte counts', '1319 bytes from the client are missing from the capture', '# bytes from the client are missing from the capture'],
    ['base64 UUIDs', 'broker assigned ClientInstanceId oLHC0-T1SmuMfZ4PGis8TQ although the request header carried xaHnsh0_Toqca38uDUqLkQ', 'broker assigned ClientInstanceId <id> although the request header carried <id>'],
    ['hex UUIDs', 'id 3f2504e0-4f89-41d3-9a0c-0305e82c3301.', 'id <id>.'],
    ['IP addresses', 'is used from 2 hosts: 10.2.0.25, 10.2.0.26', 'is used from # hosts: #.#.#.#, #.#.#.#'],
    ['a 22-character word that cannot be a UUID (last character)', 'ClientId "inventory-consumer-abc"', 'ClientId "inventory-consumer-abc"'],
    ['a 23-character word', 'xaHnsh0_Toqca38uDUqLkQQ', 'xaHnsh#_Toqca#uDUqLkQQ'],
  ])('%s', (_name, message, normalized) => {
    expect(normalizeMessage(message)).toBe(normalized);
  });
});

describe('fingerprints', () => {
  let run1: Report;
  let run2: Report;
  beforeAll(async () => {
    [run1, run2] = await Promise.all([analyzeTraffic(RUN_1), analyzeTraffic(RUN_2)]);
  });

  it('are the same for the same traffic captured twice, frames, ports, correlation IDs and brokers apart', () => {
    expect(brief(run1.findings)).toEqual([
      ['client-id-after-first', 6, 'ClientId "payments-api" sent on a request other than the first of the connection'],
      ['telemetry-zero-id-with-header', 6, 'GetTelemetrySubscriptions v0 asks for a new ID (zero body ClientInstanceId) although its header carries one'],
      ['broker-accepted-invalid', 7, 'broker answered GetTelemetrySubscriptions v0 with a zero body ClientInstanceId with a header ID (frame 6) with error code 0, not INVALID_REQUEST (42)'],
      ['broker-assigned-instance-id', 7, 'broker assigned ClientInstanceId XE0-LxoLTJ2Of2pbTD0uHw although the request header carried ASNFZ4mrze8BI0VniavN7w'],
      ['member-id-mismatch', 8, 'MemberId "Tq3nWZ0bR1ubfIX6i9-Dfw" is not the client instance ID ASNFZ4mrze8BI0VniavN7w'],
      ['tls-on-kafka-port', 12, 'TLS connection: its ClientHello does not parse (message cut short); its Kafka contents cannot be analysed'],
    ]);
    expect(brief(run2.findings)).toEqual([
      ['client-id-after-first', 11, 'ClientId "payments-api" sent on a request other than the first of the connection'],
      ['telemetry-zero-id-with-header', 11, 'GetTelemetrySubscriptions v0 asks for a new ID (zero body ClientInstanceId) although its header carries one'],
      ['broker-accepted-invalid', 12, 'broker answered GetTelemetrySubscriptions v0 with a zero body ClientInstanceId with a header ID (frame 11) with error code 0, not INVALID_REQUEST (42)'],
      ['broker-assigned-instance-id', 12, 'broker assigned ClientInstanceId oLHC0-T1SmuMfZ4PGis8TQ although the request header carried ASNFZ4mrze8BI0VniavN7w'],
      ['member-id-mismatch', 13, 'MemberId "ERERESIiIiIzMzMzRERERA" is not the client instance ID ASNFZ4mrze8BI0VniavN7w'],
      ['tls-on-kafka-port', 17, 'TLS connection: its ClientHello does not parse (message cut short); its Kafka contents cannot be analysed'],
    ]);
    expect(run2.findings.map((f) => [f.client, f.broker, f.correlationId])).not.toEqual(run1.findings.map((f) => [f.client, f.broker, f.correlationId]));
    expect(fingerprintAll(run2)).toEqual(fingerprintAll(run1));
    expect(new Set(fingerprintAll(run1)).size).toBe(6);
  });

  it('are pinned: the baseline file format promises them (changing the recipe needs a new BASELINE_VERSION)', () => {
    // The recipe: the first 16 hex digits of SHA-256 over [version tag, rule, identity, API key, normalized message].
    const parts = ['kcid-fingerprint-1', 'client-id-after-first', 'client-id:payments-api', '71', 'ClientId "payments-api" sent on a request other than the first of the connection'];
    expect(createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, 16)).toBe('42734b03b7bcf06e');
    expect(fingerprintAll(run1)).toEqual(['42734b03b7bcf06e', '52edde67c7b106b2', '302e5217de890a68', '88ff6488e51e6dcb', '4f8441920b48c277', 'b0c70c9d9ce5d422']);
  });

  it('are the same for the mix fixture with other traffic in front of it', async () => {
    const mix = buildKip1313Mix();
    const shifted = new Scenario(1_767_225_600);
    const noise = shifted.connect({ client: '192.168.1.5:5000', broker: '192.168.1.6:80' });
    noise.clientBytes(new TextEncoder().encode('GET / HTTP/1.1\r\n\r\n'));
    shifted.add(mix.frames);
    const [a, b] = await Promise.all([analyzeFiles([MIX]), analyzeFiles([shifted.file()])]);
    expect(b.findings.map((f) => f.frame)).toEqual(a.findings.map((f) => (f.frame === null ? null : f.frame + 4)));
    expect(fingerprintAll(b)).toEqual(fingerprintAll(a));
  });

  it('survive a client restart: a new instance ID with the same ClientId gives the same fingerprints', async () => {
    const restarted = await analyzeTraffic({ ...RUN_1, instance: ID_B });
    expect(restarted.findings[0]!.clientInstanceId).toBe(ID_B_B64);
    expect(fingerprintAll(restarted)).toEqual(fingerprintAll(run1));
  });

  it('identify a client by the ClientId its connection named, else its host, else the capture', () => {
    const f = run1.findings[5]!;
    const fp = new Fingerprinter(run1);
    expect(fp.identity(f)).toBe('host:10.2.0.29');
    expect(fp.identity({ ...f, client: '[fd00::29]:4711' })).toBe('host:fd00::29');
    expect(fp.identity({ ...f, client: null, broker: null })).toBe('capture');
    expect(fp.identity(run1.findings[0]!)).toBe('client-id:payments-api');
    expect(fingerprint(run1.findings[0]!, run1)).toBe(fingerprintAll(run1)[0]);
  });

  it('ignore severity: a rule set to another severity stays suppressed', async () => {
    const warned = await analyzeFiles([traffic(RUN_1).file()], { kafkaPorts: new Set([9092, 9093]) }, { severities: new Map([['client-id-after-first', 'warning']]) });
    expect(warned.findings[0]!.severity).toBe('warning');
    expect(fingerprintAll(warned)).toEqual(fingerprintAll(run1));
  });
});

describe('writeBaseline and applyBaseline', () => {
  let mix: Report;
  beforeAll(async () => {
    mix = await analyzeFiles([MIX]);
  });

  it('writes the golden baseline for the mix fixture: one entry per fingerprint, sorted', () => {
    const text = writeBaseline(mix);
    checkGolden('kip1313-mix.baseline.json', text);
    const doc = JSON.parse(text) as { version: number; createdBy: string; entries: { rule: string; count: number }[] };
    expect(doc.version).toBe(1);
    expect(doc.createdBy).toBe('kcid');
    expect(doc.entries).toHaveLength(22);
    expect(doc.entries.map((e) => e.rule)).toEqual([...doc.entries.map((e) => e.rule)].sort());
    expect(doc.entries[0]).toEqual({ rule: 'broker-accepted-invalid', clientInstanceId: 'xaHnsh0_Toqca38uDUqLkQ', apiName: 'GetTelemetrySubscriptions', fingerprint: fingerprintAll(mix)[mix.findings.findIndex((f) => f.rule === 'broker-accepted-invalid')], count: 1 });
  });

  it('counts findings that share a fingerprint in one entry', async () => {
    const twice = await analyzeFiles([MIX, MIX]);
    const entries = (JSON.parse(writeBaseline(twice)) as { entries: { rule: string; count: number }[] }).entries;
    // The KIP-714 conversation is judged across captures, as instances are: the same pushes twice are
    // a client pushing each one twice, at once (too soon, and accepted).
    const conversation = new Set(TELEMETRY_RULES.filter((r) => r.id !== 'telemetry-payload-invalid' && r.id !== 'telemetry-push-without-subscription').map((r) => r.id));
    expect(entries.filter((e) => !conversation.has(e.rule)).map((e) => [e.rule, e.count])).toEqual(
      (JSON.parse(writeBaseline(mix)) as { entries: { rule: string }[] }).entries
        .filter((e) => !conversation.has(e.rule))
        .map((e) => [e.rule, e.rule.startsWith('instance-id-multiple') ? 1 : 2]),
    );
    expect(entries.filter((e) => conversation.has(e.rule)).map((e) => [e.rule, e.count])).toEqual([
      ['broker-accepted-early-push', 1],
      ['broker-accepted-early-push', 1],
      ['telemetry-push-too-soon', 1],
      ['telemetry-push-too-soon', 1],
      ['telemetry-push-too-soon', 1],
      ['telemetry-push-too-soon', 1],
    ]);
  });

  it('suppresses everything it recorded, on another capture of the same traffic', async () => {
    const [run1, run2] = await Promise.all([analyzeTraffic(RUN_1), analyzeTraffic(RUN_2)]);
    const { report, suppressed } = applyBaseline(run2, parseBaseline(writeBaseline(run1), 'kcid-baseline.json'));
    expect(suppressed).toBe(6);
    expect(report.findings).toEqual([]);
    expect(report.counts.findings).toEqual({ error: 0, warning: 0, info: 0 });
    expect(report.suppressed).toBe(6);
    expect(report.counts.connections).toBe(run2.counts.connections);
  });

  it('reports only new findings, and says how many it suppressed', async () => {
    // Another client (another ClientId): its findings are new; the TLS note about the same host is not.
    const [run1, other] = await Promise.all([analyzeTraffic(RUN_1), analyzeTraffic({ ...RUN_2, instance: ID_B, clientId: 'billing-api' })]);
    const { report, suppressed } = applyBaseline(other, parseBaseline(writeBaseline(run1), 'kcid-baseline.json'));
    expect(suppressed).toBe(1);
    expect(report.findings.map((f) => f.rule)).toEqual([
      'client-id-after-first',
      'telemetry-zero-id-with-header',
      'broker-accepted-invalid',
      'broker-assigned-instance-id',
      'member-id-mismatch',
    ]);
    expect(report.counts.findings).toEqual({ error: 4, warning: 1, info: 0 });
    expect(summaryLine(report)).toBe(
      '1 capture, 23 packets, 3 Kafka connections (port 9093), 4 requests, 3 client instances: 4 errors, 1 warning, 0 notes, 1 suppressed by the baseline',
    );
    const summary = (JSON.parse(renderJson(report)) as { summary: Record<string, unknown> }).summary;
    expect(Object.keys(summary)).toEqual(['connections', 'requests', 'responses', 'instances', 'findings', 'suppressed']);
    expect(summary.suppressed).toBe(1);
  });

  it('shows suppressed 0 in JSON when a baseline was used, and nothing without one', () => {
    const empty: Baseline = { version: 1, entries: [], fingerprints: new Set() };
    const { report, suppressed } = applyBaseline(mix, empty);
    expect(suppressed).toBe(0);
    expect((JSON.parse(renderJson(report)) as { summary: { suppressed?: number } }).summary.suppressed).toBe(0);
    expect((JSON.parse(renderJson(mix)) as { summary: { suppressed?: number } }).summary).not.toHaveProperty('suppressed');
    expect(summaryLine(report)).toBe(summaryLine(mix));
    expect(report.findings).toEqual(mix.findings);
  });

  it('adds up over two baselines', () => {
    const prints = fingerprintAll(mix);
    const once = applyBaseline(mix, { version: 1, entries: [], fingerprints: new Set(prints.slice(0, 2)) }).report;
    const twice = applyBaseline(once, { version: 1, entries: [], fingerprints: new Set(prints.slice(2, 5)) });
    expect(twice.suppressed).toBe(3);
    expect(twice.report.suppressed).toBe(5);
    expect(twice.report.findings).toEqual(mix.findings.slice(5));
  });
});

describe('parseBaseline', () => {
  const FP = '0123456789abcdef';
  const entry = { rule: 'client-id-after-first', clientInstanceId: 'ASNFZ4mrze8BI0VniavN7w', apiName: 'Metadata', fingerprint: FP, count: 2 };
  const doc = (o: Record<string, unknown>) => JSON.stringify({ version: 1, createdBy: 'kcid', entries: [entry], ...o });

  it('reads what writeBaseline writes', () => {
    const b = parseBaseline(doc({}), 'b.json');
    expect(b).toEqual({ version: 1, entries: [entry], fingerprints: new Set([FP]) });
  });

  it('accepts rules it does not know (written by another kcid version) and null instance and API', () => {
    const b = parseBaseline(doc({ entries: [{ ...entry, rule: 'from-the-future', clientInstanceId: null, apiName: null }] }), 'b.json');
    expect(b.entries[0]!.rule).toBe('from-the-future');
  });

  it.each([
    ['not JSON', '{"version": 1,', 'b.json: not a kcid baseline (not valid JSON)'],
    ['an array', '[]', "b.json: not a kcid baseline (expected a JSON object written by 'kcid analyze --write-baseline')"],
    ['another tool', '{"version": 1, "createdBy": "other", "entries": []}', "b.json: not a kcid baseline (expected a JSON object written by 'kcid analyze --write-baseline')"],
    ['another version', doc({ version: 2 }), 'b.json: baseline version 2 is not supported (this kcid reads version 1; write it again with --write-baseline)'],
    ['a version string', doc({ version: '1' }), 'b.json: baseline version "1" is not supported (this kcid reads version 1; write it again with --write-baseline)'],
    ['an unknown key', doc({ extra: true }), 'b.json: unknown key "extra" (expected version, createdBy, entries)'],
    ['a __proto__ key', '{"version": 1, "createdBy": "kcid", "entries": [], "__proto__": {"polluted": 1}}', 'b.json: unknown key "__proto__" (expected version, createdBy, entries)'],
    ['entries not an array', doc({ entries: {} }), 'b.json: "entries" must be an array'],
    ['an entry not an object', doc({ entries: [entry, 3] }), 'b.json: entries[1] must be an object'],
    ['an unknown entry key', doc({ entries: [{ ...entry, note: 'x' }] }), 'b.json: entries[0]: unknown key "note" (expected rule, clientInstanceId, apiName, fingerprint, count)'],
    ['a missing key', doc({ entries: [{ ...entry, count: undefined }] }), 'b.json: entries[0]: missing "count"'],
    ['an empty rule', doc({ entries: [{ ...entry, rule: '' }] }), 'b.json: entries[0]: "rule" must be a rule id'],
    ['a numeric instance', doc({ entries: [{ ...entry, clientInstanceId: 5 }] }), 'b.json: entries[0]: "clientInstanceId" must be a string or null'],
    ['a numeric API', doc({ entries: [{ ...entry, apiName: 3 }] }), 'b.json: entries[0]: "apiName" must be a string or null'],
    ['a short fingerprint', doc({ entries: [{ ...entry, fingerprint: 'abc' }] }), 'b.json: entries[0]: "fingerprint" must be 16 lowercase hex digits'],
    ['an uppercase fingerprint', doc({ entries: [{ ...entry, fingerprint: FP.toUpperCase() }] }), 'b.json: entries[0]: "fingerprint" must be 16 lowercase hex digits'],
    ['a zero count', doc({ entries: [{ ...entry, count: 0 }] }), 'b.json: entries[0]: "count" must be a whole number from 1'],
    ['a fractional count', doc({ entries: [{ ...entry, count: 1.5 }] }), 'b.json: entries[0]: "count" must be a whole number from 1'],
  ])('rejects %s with one line', (_name, text, message) => {
    expect(() => parseBaseline(text, 'b.json')).toThrow(new BaselineError(message));
    try {
      parseBaseline(text, 'b.json');
    } catch (e) {
      expect(e).toBeInstanceOf(BaselineError);
      expect((e as BaselineError).oneLine).toBe(true);
    }
  });

  it('sanitizes the file name and keys in its errors', () => {
    expect(() => parseBaseline('{"version": 1, "createdBy": "kcid", "entries": [], "\\u001b[2J": 1}', 'b\x1b.json')).toThrow(
      'b\\x1b.json: unknown key "\\x1b[2J" (expected version, createdBy, entries)',
    );
  });

  it('leaves Object.prototype alone', () => {
    expect(() => parseBaseline('{"version": 1, "createdBy": "kcid", "entries": [{"__proto__": {"polluted": 1}}]}', 'b.json')).toThrow('b.json: entries[0]: unknown key "__proto__"');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('a baseline round trip across restarts', () => {
  it('suppresses the same problem after a restart (new instance ID, same ClientId)', async () => {
    const [a, b] = await Promise.all([analyzeTraffic(RUN_1), analyzeTraffic({ ...RUN_1, instance: ID_C })]);
    const { report } = applyBaseline(b, parseBaseline(writeBaseline(a), 'b.json'));
    expect(report.findings).toHaveLength(0);
    expect(report.suppressed).toBe(6);
  });
});
