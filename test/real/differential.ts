/**
 * Differential check of kcid against Wireshark's Kafka dissector: run tshark (with
 * `-d tcp.port==P,kafka` for every Kafka port) and `kcid requests --format ndjson` (without
 * --port: kcid must find the Kafka connections itself) on one capture, and compare request by
 * request: client and broker address, API key, API version, correlation ID, ClientId, the frame
 * the request completes in, and which response frame answers it.
 *
 * How tshark reports what kcid reports:
 * - A request is a Kafka PDU whose TCP destination port is one of the given ports (tshark's own
 *   rule: packet-kafka.c takes `destport == match_uint` for a request).
 * - A PDU reassembled from several segments belongs to the frame of its last segment, and several
 *   PDUs in one segment all belong to that segment's frame, in stream order (checked with a built
 *   capture in test/differential.test.ts): the same frame kcid reports as `frame`.
 * - tshark never fills `kafka.response_frame` on requests (not even with -2), but it puts
 *   `kafka.request_frame` on the response; a request's response frame is the response on the same
 *   connection whose request_frame and correlation ID are the request's.
 *
 * Every difference is either explained by one of the documented tshark limitations below (each
 * applies only where tshark itself flags the request as beyond what it knows) or fails the test.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The built CLI (test/global-setup.ts builds dist/ first); KCID_BIN runs another build instead. */
const KCID = process.env['KCID_BIN'] ?? join(REPO, 'bin', 'kcid');
const MAX_OUTPUT = 512 << 20;

/** What both tools say about one request. */
export interface Request {
  frame: number;
  client: string;
  broker: string;
  apiKey: number;
  apiVersion: number;
  correlationId: number;
  clientId: string | null;
  responseFrame: number | null;
}

/** Why tshark could not dissect a request beyond its header, in its own words (expert info). */
export type TsharkFlag = 'unknown-api-key' | 'unsupported-api-version';

export interface TsharkRequest extends Request {
  /** Set when tshark flags the request `kafka.unknown_api_key` or `kafka.unsupported_api_version`. */
  flag: TsharkFlag | null;
  /** The expert message tshark gave with the flag ("Unsupported Produce version. Supports v0-8."). */
  flagMessage: string | null;
  /** tshark's dissection of the request's frame ended in an exception ("Malformed Packet"). */
  malformed: boolean;
}

// ---- tshark ------------------------------------------------------------------------------------

type JsonLayer = Record<string, unknown>;

/** `--no-duplicate-keys` turns repeated keys (several Kafka PDUs in one frame) into arrays. */
function asList(v: unknown): JsonLayer[] {
  if (v === undefined || v === null) return [];
  return (Array.isArray(v) ? v : [v]) as JsonLayer[];
}

function str(layer: JsonLayer | undefined, key: string): string | null {
  const v = layer?.[key];
  if (typeof v === 'string') return v;
  // IP-in-IP and the like repeat a field: the innermost (last) one is the TCP connection's.
  if (Array.isArray(v) && typeof v[v.length - 1] === 'string') return v[v.length - 1] as string;
  return null;
}

function int(layer: JsonLayer | undefined, key: string): number | null {
  const s = str(layer, key);
  return s === null ? null : Number.parseInt(s, 10);
}

/** Searches a PDU's subtree for an expert field (tshark hangs them under the field they concern). */
function findKey(node: unknown, key: string): JsonLayer | null {
  if (node === null || typeof node !== 'object') return null;
  if (Array.isArray(node)) {
    for (const n of node) {
      const hit = findKey(n, key);
      if (hit !== null) return hit;
    }
    return null;
  }
  const obj = node as JsonLayer;
  if (key in obj) return obj;
  for (const v of Object.values(obj)) {
    const hit = findKey(v, key);
    if (hit !== null) return hit;
  }
  return null;
}

function flagOf(pdu: JsonLayer): [TsharkFlag | null, string | null] {
  for (const [field, flag] of [
    ['kafka.unknown_api_key', 'unknown-api-key'],
    ['kafka.unsupported_api_version', 'unsupported-api-version'],
  ] as const) {
    const expert = findKey(pdu, field);
    if (expert !== null) return [flag, str(expert, '_ws.expert.message')];
  }
  return [null, null];
}

/** tshark writes a null string (length -1) as this text (epan/dissectors/packet-kafka.c). */
const TSHARK_NULL_STRING = '[ Null ]';

function clientId(pdu: JsonLayer): string | null {
  const s = str(pdu, 'kafka.client_id');
  return s === TSHARK_NULL_STRING ? null : s;
}

/** 'ip:port', or '[ipv6]:port', as kcid writes endpoints. */
function endpoint(ip: string, port: number): string {
  return ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`;
}

export function decodeAsArgs(ports: readonly number[]): string[] {
  return ports.flatMap((p) => ['-d', `tcp.port==${p},kafka`]);
}

/**
 * Where one `npm test` keeps what tshark said about a capture (test/global-setup.ts names the run
 * and removes the folder at the end): differential.test.ts and differential-bodies.test.ts ask
 * tshark the same question of the same captures, and it is the slowest thing either does.
 */
export function tsharkCacheDir(env: NodeJS.ProcessEnv = process.env): string | null {
  return env.KCID_TEST_RUN === undefined ? null : join(tmpdir(), `kcid-cache-${env.KCID_TEST_RUN}`);
}

/** tshark's stdout for `args` on `file`, from this run's cache when another test asked before (same file, size, time and arguments). */
async function tsharkCached(file: string, args: string[]): Promise<string> {
  const dir = tsharkCacheDir();
  let key: string | null = null;
  if (dir !== null) {
    const st = statSync(file);
    key = createHash('sha256').update(JSON.stringify([file, st.size, st.mtimeMs, args])).digest('hex');
    try {
      return readFileSync(join(dir, key), 'utf8');
    } catch {
      // Not asked yet in this run.
    }
  }
  const { stdout } = await run('tshark', args, { maxBuffer: MAX_OUTPUT, env: { ...process.env, LC_ALL: 'C' } });
  if (dir !== null && key !== null) {
    mkdirSync(dir, { recursive: true });
    // Written whole, then renamed: another worker reads all of it or nothing.
    const part = join(dir, `${key}.${process.pid}.part`);
    writeFileSync(part, stdout);
    renameSync(part, join(dir, key));
  }
  return stdout;
}

/** Runs tshark on `file` with the given Kafka ports and reads its requests and responses. */
export async function tsharkRequests(file: string, ports: readonly number[]): Promise<TsharkRequest[]> {
  const args = [
    '-n',
    '-r',
    file,
    ...decodeAsArgs(ports),
    // The default, stated: reassemble PDUs across segments.
    '-o',
    'tcp.desegment_tcp_streams:TRUE',
    '-Y',
    'kafka',
    '-T',
    'json',
    '--no-duplicate-keys',
    '-J',
    'frame ip ipv6 tcp kafka _ws.malformed',
  ];
  const stdout = await tsharkCached(file, args);
  const packets = JSON.parse(stdout) as { _source: { layers: JsonLayer } }[];
  const portSet = new Set(ports);
  const requests: TsharkRequest[] = [];
  /** "client|broker|requestFrame|correlationId" → response frame. */
  const answers = new Map<string, number>();
  for (const p of packets) {
    const layers = p._source.layers;
    const frame = int(layers['frame'] as JsonLayer, 'frame.number')!;
    const ipLayer = (asList(layers['ipv6']).at(-1) ?? asList(layers['ip']).at(-1)) as JsonLayer;
    const v6 = layers['ipv6'] !== undefined;
    const src = str(ipLayer, v6 ? 'ipv6.src' : 'ip.src')!;
    const dst = str(ipLayer, v6 ? 'ipv6.dst' : 'ip.dst')!;
    const tcp = asList(layers['tcp']).at(-1);
    const srcPort = int(tcp, 'tcp.srcport')!;
    const dstPort = int(tcp, 'tcp.dstport')!;
    const malformed = layers['_ws.malformed'] !== undefined;
    for (const pdu of asList(layers['kafka'])) {
      const correlationId = int(pdu, 'kafka.correlation_id');
      if (correlationId === null) continue; // a PDU too short for a header
      if (portSet.has(dstPort)) {
        const [flag, flagMessage] = flagOf(pdu);
        requests.push({
          frame,
          client: endpoint(src, srcPort),
          broker: endpoint(dst, dstPort),
          apiKey: int(pdu, 'kafka.api_key')!,
          apiVersion: int(pdu, 'kafka.api_version')!,
          correlationId,
          clientId: clientId(pdu),
          responseFrame: null,
          flag,
          flagMessage,
          malformed,
        });
      } else {
        const requestFrame = int(pdu, 'kafka.request_frame');
        if (requestFrame === null) continue;
        answers.set(`${endpoint(dst, dstPort)}|${endpoint(src, srcPort)}|${requestFrame}|${correlationId}`, frame);
      }
    }
  }
  for (const r of requests) r.responseFrame = answers.get(`${r.client}|${r.broker}|${r.frame}|${r.correlationId}`) ?? null;
  return requests;
}

// ---- kcid --------------------------------------------------------------------------------------

/** Runs the built CLI: `kcid requests FILE --format ndjson`, without --port. */
export async function kcidRequests(file: string): Promise<Request[]> {
  const { stdout } = await run(process.execPath, [KCID, 'requests', file, '--format', 'ndjson', '--quiet'], {
    maxBuffer: MAX_OUTPUT,
    env: { ...process.env, NO_COLOR: '1' },
  });
  return stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Request & { requestCaptured: boolean })
    // Responses whose request was not captured are rows too; tshark's request list has no such row.
    .filter((r) => r.requestCaptured)
    .map((r) => {
      return {
        frame: r.frame,
        client: r.client,
        broker: r.broker,
        apiKey: r.apiKey,
        apiVersion: r.apiVersion,
        correlationId: r.correlationId,
        clientId: r.clientId,
        responseFrame: r.responseFrame,
      };
    });
}

// ---- comparison --------------------------------------------------------------------------------

export type Field = 'frame' | 'apiKey' | 'apiVersion' | 'clientId' | 'responseFrame' | 'onlyInTshark' | 'onlyInKcid';

export interface Difference {
  field: Field;
  /** The request as tshark sees it (absent when only kcid has it). */
  tshark: TsharkRequest | null;
  /** The request as kcid sees it (absent when only tshark has it). */
  kcid: Request | null;
  /** The limitation that explains it, or null: a kcid bug or an unknown tshark quirk. */
  limitation: Limitation | null;
}

export interface Limitation {
  id: string;
  /** Why tshark differs, with the evidence. */
  reason: string;
  applies(d: Omit<Difference, 'limitation'>, capture: CaptureFacts): boolean;
}

/** What a limitation may know of the capture beyond the two requests compared. */
export interface CaptureFacts {
  /** Frames the capture holds fewer bytes of than were on the wire (a snapshot length cut them). */
  truncatedFrames: ReadonlySet<number>;
}

const NO_FACTS: CaptureFacts = { truncatedFrames: new Set() };

/**
 * What tshark 4.0's Kafka dissector knows: API key → highest version (every one from v0). Keys 48
 * and above (DescribeCluster 60, ConsumerGroupHeartbeat 68, GetTelemetrySubscriptions 71,
 * PushTelemetry 72, ...) are unknown to it; a version above these is "unsupported". Measured on
 * tshark 4.0.17 with a request header for every key 0..80 and version 0..20 (the test re-measures
 * it whenever tshark is 4.0). Produce 8, Fetch 11, ListOffsets 5, Metadata 9, OffsetCommit 8,
 * OffsetFetch 7, FindCoordinator 3, JoinGroup 7, Heartbeat 4, LeaveGroup 4, SyncGroup 5,
 * ApiVersions 3, InitProducerId 3: every client in our captures sends newer versions of some.
 */
export const TSHARK_4_0_MAX_VERSION: ReadonlyMap<number, number> = new Map(
  [8, 11, 5, 9, 4, 2, 6, 3, 8, 7, 3, 7, 4, 4, 5, 5, 3, 1, 3, 5, 4, 1, 3, 3, 1, 1, 1, 0, 3, 2, 2, 2, 2, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 1, 0, 0, 0].map(
    (max, key) => [key, max],
  ),
);

/**
 * The documented limitations of tshark 4.0 that make it differ from kcid. Each applies only to
 * requests that tshark itself flags (expert info `kafka.unknown_api_key` or
 * `kafka.unsupported_api_version`), so a newer tshark that knows more simply stops using them.
 *
 * Flagged requests whose header tshark still reads right, so that every compared field must agree
 * (no limitation needed): unknown keys (68, 71, 72 in our captures: tshark reads key, version,
 * correlation ID and ClientId, skips the body, and matches the response), and unsupported versions
 * whose body happens not to throw (InitProducerId v4).
 */
export const LIMITATIONS: readonly Limitation[] = [
  {
    // Seen for Produce v9/v10, Fetch v12/v13/v16, Metadata v12 and ListOffsets v7 (flexible versions
    // tshark reads as if they were not: "Unsupported Metadata version. Supports v0-9.", then
    // "Malformed Packet"). tshark still reads their headers right, but their responses say "Request
    // missing": as observed, it files a request for matching only when dissecting it did not throw.
    // Requests it flags without throwing (InitProducerId v4, keys 68/71/72 whose bodies it skips)
    // are matched.
    id: 'unsupported-version-response-unmatched',
    reason:
      'tshark 4.0 cannot dissect the body of this request version (it flags the version unsupported ' +
      'and the frame malformed) and then gives the response no kafka.request_frame, so it names no ' +
      'response frame where kcid does',
    applies: (d) =>
      d.field === 'responseFrame' &&
      d.tshark !== null &&
      d.tshark.flag === 'unsupported-api-version' &&
      d.tshark.malformed &&
      d.tshark.responseFrame === null &&
      d.kcid !== null &&
      d.kcid.responseFrame !== null,
  },
  {
    // Seen on every fixture cut with editcap -s 128: a request or response packet says "[Packet size
    // limited during capture]"; the response PDU has a correlation ID but no kafka.request_frame. As
    // with unsupported versions, tshark files a request for matching only when dissecting it (and
    // then its response) did not stop short.
    id: 'snaplen-response-unmatched',
    reason:
      'tshark 4.0 links a response to its request only when it dissects both whole: when the snapshot ' +
      'length cut the request\'s or the response\'s packet, the response gets no kafka.request_frame, so ' +
      'tshark names no response frame where kcid does',
    applies: (d, capture) =>
      d.field === 'responseFrame' &&
      d.tshark !== null &&
      d.tshark.responseFrame === null &&
      d.kcid !== null &&
      d.kcid.responseFrame !== null &&
      (capture.truncatedFrames.has(d.tshark.frame) || capture.truncatedFrames.has(d.kcid.responseFrame)),
  },
  {
    // kcat-mock-large cut to 128 bytes: an 88 KiB Produce request over 3 segments, all cut.
    id: 'snaplen-reassembly-abandoned',
    reason:
      'tshark 4.0 stops reassembling a PDU at a segment the snapshot length cut and files the request at ' +
      'that segment, where kcid files it at the frame holding its last byte, as it does for every request',
    applies: (d, capture) =>
      d.field === 'frame' &&
      d.tshark !== null &&
      d.kcid !== null &&
      capture.truncatedFrames.has(d.tshark.frame) &&
      d.kcid.frame > d.tshark.frame,
  },
  {
    // The same capture: inside the abandoned PDU's cut payload tshark reads record bytes as a header
    // ("key 24946 v26469", ASCII text) and flags the key unknown.
    id: 'snaplen-junk-pdu',
    reason:
      'after abandoning a cut PDU, tshark 4.0 dissects payload bytes of the truncated segment as a new ' +
      'Kafka header, with an API key it flags unknown; kcid skips those bytes as payload',
    applies: (d, capture) =>
      d.field === 'onlyInTshark' &&
      d.tshark !== null &&
      d.tshark.flag === 'unknown-api-key' &&
      capture.truncatedFrames.has(d.tshark.frame),
  },
];

/** Frames whose captured length is below their length on the wire. */
export async function truncatedFrames(file: string): Promise<Set<number>> {
  const { stdout } = await run('tshark', ['-n', '-r', file, '-Y', 'frame.cap_len < frame.len', '-T', 'fields', '-e', 'frame.number'], {
    maxBuffer: MAX_OUTPUT,
    env: { ...process.env, LC_ALL: 'C' },
  });
  return new Set(stdout.split('\n').filter((l) => l !== '').map(Number));
}

export interface Comparison {
  file: string;
  ports: readonly number[];
  /** Requests both tools reported (paired by connection and correlation ID). */
  compared: number;
  tsharkRequests: number;
  kcidRequests: number;
  differences: Difference[];
  /** Differences no limitation explains: each one fails the test. */
  unexplained: Difference[];
  /** Connections (client → broker) with requests: tshark's (ports given) and kcid's (detected). */
  tsharkConnections: string[];
  kcidConnections: string[];
  /** Requests tshark flagged as beyond its knowledge, by "key vN" (for the summary). */
  flagged: Map<string, number>;
  /** Requests with no difference at all, out of every request either tool reported. */
  agreeing: number;
  total: number;
  /** The ClientIds of kcid's requests, sorted (for the summary). */
  clientIds: string[];
}

function pairKey(r: Request): string {
  return `${r.client}|${r.broker}|${r.correlationId}`;
}

function connections(rs: readonly Request[]): string[] {
  return [...new Set(rs.map((r) => `${r.client} -> ${r.broker}`))].sort();
}

const COMPARED_FIELDS = ['frame', 'apiKey', 'apiVersion', 'clientId', 'responseFrame'] as const;

/**
 * Pairs the two lists by (client, broker, correlation ID), the n-th occurrence with the n-th in
 * capture order (a client may reuse correlation IDs), and lists every field that differs.
 */
export function compare(
  file: string,
  ports: readonly number[],
  tshark: readonly TsharkRequest[],
  kcid: readonly Request[],
  capture: CaptureFacts = NO_FACTS,
): Comparison {
  const byKey = new Map<string, Request[]>();
  for (const r of kcid) {
    const list = byKey.get(pairKey(r));
    if (list === undefined) byKey.set(pairKey(r), [r]);
    else list.push(r);
  }
  const raw: Omit<Difference, 'limitation'>[] = [];
  let compared = 0;
  for (const t of tshark) {
    const k = byKey.get(pairKey(t))?.shift();
    if (k === undefined) {
      raw.push({ field: 'onlyInTshark', tshark: t, kcid: null });
      continue;
    }
    compared++;
    for (const f of COMPARED_FIELDS) if (t[f] !== k[f]) raw.push({ field: f, tshark: t, kcid: k });
  }
  for (const rest of byKey.values()) for (const k of rest) raw.push({ field: 'onlyInKcid', tshark: null, kcid: k });
  const differences = raw.map((d) => ({ ...d, limitation: LIMITATIONS.find((l) => l.applies(d, capture)) ?? null }));
  const flagged = new Map<string, number>();
  for (const t of tshark) {
    if (t.flag === null) continue;
    const name = `${t.apiKey} v${t.apiVersion}`;
    flagged.set(name, (flagged.get(name) ?? 0) + 1);
  }
  const differing = new Set(differences.map((d) => d.tshark ?? d.kcid));
  const total = compared + raw.filter((d) => d.field === 'onlyInTshark' || d.field === 'onlyInKcid').length;
  return {
    file,
    ports,
    compared,
    tsharkRequests: tshark.length,
    kcidRequests: kcid.length,
    differences,
    unexplained: differences.filter((d) => d.limitation === null),
    tsharkConnections: connections(tshark),
    kcidConnections: connections(kcid),
    flagged,
    agreeing: total - differing.size,
    total,
    clientIds: [...new Set(kcid.map((r) => r.clientId ?? '(null)'))].sort(),
  };
}

/** Runs both tools on one capture and compares them. */
export async function differential(file: string, ports: readonly number[]): Promise<Comparison> {
  const [t, k, cut] = await Promise.all([tsharkRequests(file, ports), kcidRequests(file), truncatedFrames(file)]);
  return compare(file, ports, t, k, { truncatedFrames: cut });
}

/** One line per difference, for a failing test's message. */
export function formatDifference(d: Difference): string {
  const r = d.tshark ?? d.kcid!;
  const at = `frame ${r.frame} ${r.client} -> ${r.broker} key ${r.apiKey} v${r.apiVersion} corr ${r.correlationId}`;
  const why = d.limitation === null ? 'UNEXPLAINED' : `tshark limitation ${d.limitation.id}`;
  if (d.field === 'onlyInTshark' || d.field === 'onlyInKcid') return `${at}: ${d.field} (${why})`;
  return `${at}: ${d.field} tshark=${JSON.stringify(d.tshark![d.field])} kcid=${JSON.stringify(d.kcid![d.field])} (${why})`;
}
