/**
 * The four benchmark inputs, generated packet by packet straight to disk:
 *
 *  - produce:   a few hundred long connections sending 64 KiB - 1 MiB Produce requests in 1,448-byte
 *               segments (delayed ACKs from the broker), each answered by a small Produce response;
 *  - fetch:     consumers sending small Fetch requests answered by 64 KiB - 1 MiB Fetch responses;
 *  - chatty:    100,000 short connections (per 200 MB) doing ApiVersions, Metadata and Heartbeats;
 *  - telemetry: a KIP-1313 mix: clients sending request header v2 with tag 0, GetTelemetrySubscriptions
 *               and PushTelemetry v0/v1 (real OTLP metrics in all five codecs, otlp.mjs),
 *               ConsumerGroupHeartbeat, some Produce, and a few violations.
 *
 * Connections interleave at segment level (a scheduler steps a random active connection), as on a
 * busy broker's interface. Everything is deterministic for a given seed and size.
 */
import { TcpFlow, PcapWriter, ipv4 } from './pcap-writer.mjs';
import { API, Enc, planBatch, writeBatch } from './kafka.mjs';
import { Rng } from './rng.mjs';
import { TlsFlow, TlsKeyLog } from './tls.mjs';
import { telemetryPayloads } from './otlp.mjs';

export const SCENARIOS = ['produce', 'fetch', 'chatty', 'telemetry'];

const MiB = 1024 * 1024;
const BROKERS = ['10.0.0.1', '10.0.0.2', '10.0.0.3'].map(ipv4);
const BROKER_PORT = 9092;
const TOPICS = ['orders', 'payments', 'clickstream', 'inventory', 'audit-log'];
/** A generator yields this between round trips: the scheduler may park the connection there. */
const IDLE = 'idle';

/**
 * Writes scenario `name` of about `bytes` bytes to `path`; returns its manifest (what was put in,
 * for checking kcid's counts).
 */
export function generate(name, path, bytes, seed = 1, opts = {}) {
  const make = GENERATORS[name];
  if (make === undefined) throw new Error(`unknown scenario '${name}' (expected ${SCENARIOS.join(', ')})`);
  const ctx = new Context(path, bytes, seed + SCENARIOS.indexOf(name));
  // opts.tlsKeylog: the same traffic over TLS 1.3, its secrets written to this key log file.
  if (opts.tlsKeylog !== undefined) ctx.tls = new TlsKeyLog(opts.tlsKeylog);
  make(ctx);
  ctx.w.close();
  return {
    scenario: name,
    seed,
    targetBytes: bytes,
    bytes: ctx.w.bytes,
    packets: ctx.w.packets,
    connections: ctx.connections,
    requests: ctx.requests,
    responses: ctx.responses,
    violations: Object.fromEntries([...ctx.violations].sort()),
    ...(ctx.telemetry === undefined ? {} : { telemetry: ctx.telemetry }),
  };
}

class Context {
  constructor(path, target, seed) {
    this.rng = new Rng(seed);
    this.w = new PcapWriter(path);
    this.target = target;
    /** Random bytes that record values and metrics blobs are cut from. */
    this.pattern = this.rng.bytes(4 * MiB);
    /** Encoder for frames sent in one go (never held across a yield). */
    this.e = new Enc(64 * 1024);
    this.connections = 0;
    this.requests = 0;
    this.responses = 0;
    this.violations = new Map();
    this.nextHost = 0;
    this.ports = new Map();
    this.tls = null;
  }

  full() {
    return this.w.bytes >= this.target;
  }

  /** A client address: 10.1.x.y, hosts handed out in order. */
  newHost() {
    const n = this.nextHost++;
    return ipv4(`10.${1 + ((n >> 16) & 0x3f)}.${(n >> 8) & 0xff}.${n & 0xff}`);
  }

  /** The host's next ephemeral port (Linux's default range 32768-60999). */
  port(host) {
    const p = this.ports.get(host) ?? 32768 + this.rng.int(0, 20000);
    this.ports.set(host, p >= 60999 ? 32768 : p + 1);
    return p;
  }

  open(host, broker) {
    const tcp = new TcpFlow(this.w, { clientIp: host, clientPort: this.port(host), brokerIp: broker, brokerPort: BROKER_PORT, rng: this.rng });
    const flow = this.tls === null ? tcp : new TlsFlow(tcp, this.tls);
    flow.handshake();
    this.connections++;
    return flow;
  }

  violation(kind) {
    this.violations.set(kind, (this.violations.get(kind) ?? 0) + 1);
  }

  /** A PushTelemetry written with `payload` (otlp.mjs): counted for the manifest. */
  pushed(payload) {
    const t = (this.telemetry ??= { pushes: 0, metrics: 0, points: 0, compressedBytes: 0, decompressedBytes: 0 });
    t.pushes++;
    t.metrics += payload.metrics;
    t.points += payload.points;
    t.compressedBytes += payload.blob.length;
    t.decompressedBytes += payload.rawBytes;
  }

  /** Sends the frame just encoded in `this.e` (a request when fromClient). */
  sendSmall(flow, fromClient) {
    flow.send(fromClient, this.e.buf, 0, this.e.pos);
    if (fromClient) this.requests++;
    else this.responses++;
  }

  /** Sends a large frame from `e` in bursts of 4-32 segments, yielding between bursts. */
  *sendLarge(flow, fromClient, e) {
    let off = 0;
    while (off < e.pos) {
      off += flow.send(fromClient, e.buf, off, e.pos - off, this.rng.int(4, 32));
      if (off < e.pos) yield;
    }
    if (fromClient) this.requests++;
    else this.responses++;
  }
}

/**
 * Steps connections until all are done: `active` of them at a time, a random one per step. A
 * connection that yields IDLE may be swapped for a parked one (`parked`: connections waiting their
 * turn, started or not); `more()` makes new connections (null when there are no more).
 */
function schedule(ctx, { active: width, parked = [], more = () => null }) {
  const rng = ctx.rng;
  const active = [];
  const refill = () => {
    while (active.length < width) {
      const g = parked.length > 0 ? parked.pop() : more();
      if (g === null) return;
      active.push(g);
    }
  };
  refill();
  while (active.length > 0) {
    const i = rng.int(0, active.length - 1);
    const r = active[i].next();
    if (r.done) {
      active[i] = active[active.length - 1];
      active.pop();
      refill();
    } else if (r.value === IDLE && parked.length > 0 && rng.chance(0.3)) {
      const j = rng.int(0, parked.length - 1);
      const g = parked[j];
      parked[j] = active[i];
      active[i] = g;
    }
  }
}

// ---- client identities ------------------------------------------------------------------------

/** A client instance: its host, ClientId and KIP-1313 ClientInstanceId (null for a legacy client). */
function newInstance(ctx, prefix, kip1313) {
  const n = ctx.instances = (ctx.instances ?? 0) + 1;
  return {
    host: ctx.newHost(),
    clientId: `${prefix}-${n}`,
    id: kip1313 ? ctx.rng.bytes(16) : null,
    software: kip1313 ? ['apache-kafka-java', '4.2.0'] : ['librdkafka', '2.6.1'],
  };
}

/**
 * Request header fields for the next request of a connection: KIP-1313 clients send ClientId on the
 * first request only and tag 0 on every one; legacy clients send ClientId always and no tag 0.
 */
function who(inst, first) {
  return inst.id === null ? inst.clientId : first ? inst.clientId : null;
}

// ---- frames ---------------------------------------------------------------------------------------

function apiVersionsRequest(e, corr, inst, first = true) {
  e.reset();
  const s = e.beginFrame();
  e.requestHeader(API.ApiVersions, 3, corr, who(inst, first), inst.id);
  e.compactString(inst.software[0]).compactString(inst.software[1]).noTags();
  e.endFrame(s);
}

const SUPPORTED = [
  [0, 0, 11], [1, 0, 17], [2, 0, 9], [3, 0, 12], [8, 0, 9], [9, 0, 9], [10, 0, 6], [11, 0, 9], [12, 0, 4],
  [13, 0, 5], [14, 0, 5], [18, 0, 4], [19, 0, 7], [22, 0, 5], [32, 0, 4], [60, 0, 1], [68, 0, 1], [71, 0, 1], [72, 0, 1],
];

function apiVersionsResponse(e, corr) {
  e.reset();
  const s = e.beginFrame();
  e.responseHeader(API.ApiVersions, 3, corr);
  e.i16(0).uvarint(SUPPORTED.length + 1);
  for (const [k, lo, hi] of SUPPORTED) e.i16(k).i16(lo).i16(hi).noTags();
  e.i32(0).noTags();
  e.endFrame(s);
}

function metadataRequest(e, corr, inst, topic) {
  e.reset();
  const s = e.beginFrame();
  e.requestHeader(API.Metadata, 12, corr, who(inst, false), inst.id);
  e.uvarint(2).raw(ZERO_ID).compactString(topic).noTags();
  e.bool(true).bool(false).noTags();
  e.endFrame(s);
}

const ZERO_ID = Buffer.alloc(16);
const TOPIC_IDS = new Map(TOPICS.map((t, i) => [t, Buffer.from(`${i}`.repeat(16).slice(0, 16), 'latin1')]));

function metadataResponse(e, corr, topic, partitions) {
  e.reset();
  const s = e.beginFrame();
  e.responseHeader(API.Metadata, 12, corr);
  e.i32(0).uvarint(BROKERS.length + 1);
  BROKERS.forEach((_, i) => e.i32(i + 1).compactString(`broker-${i + 1}.kafka.internal`).i32(BROKER_PORT).compactString(null).noTags());
  e.compactString('MkU3OEVBNTcwNTJENDM2Qk').i32(1);
  e.uvarint(2).i16(0).compactString(topic).raw(TOPIC_IDS.get(topic)).bool(false).uvarint(partitions + 1);
  for (let p = 0; p < partitions; p++) {
    e.i16(0).i32(p).i32(1 + (p % 3)).i32(7);
    e.uvarint(4).i32(1).i32(2).i32(3); // replicas
    e.uvarint(4).i32(1).i32(2).i32(3); // isr
    e.uvarint(1).noTags(); // offline replicas
  }
  e.i32(-2147483648).noTags();
  e.noTags();
  e.endFrame(s);
}

function heartbeatRequest(e, corr, inst, group, generation) {
  e.reset();
  const s = e.beginFrame();
  e.requestHeader(API.Heartbeat, 4, corr, who(inst, false), inst.id);
  e.compactString(group).i32(generation).compactString(`${inst.clientId}-0c6a1d2e-7b1f-4a49-9a52-5b1e6f0e8d3c`).compactString(null).noTags();
  e.endFrame(s);
}

function errorResponse(e, apiKey, apiVersion, corr, errorCode = 0) {
  e.reset();
  const s = e.beginFrame();
  e.responseHeader(apiKey, apiVersion, corr);
  e.i32(0).i16(errorCode).noTags();
  e.endFrame(s);
}

/** Produce v9 (flexible): null transactional id, acks=-1, one topic, 1-4 partitions of record batches. */
function produceRequest(ctx, e, corr, inst, topic, partitions, bytes, baseOffset) {
  e.reset();
  const s = e.beginFrame();
  e.requestHeader(API.Produce, 9, corr, who(inst, false), inst.id);
  e.compactString(null).i16(-1).i32(30000);
  e.uvarint(2).compactString(topic).uvarint(partitions.length + 1);
  const per = Math.floor(bytes / partitions.length);
  const ts = Math.floor(ctx.w.clockUs / 1000);
  for (const p of partitions) {
    const plan = planBatch(ctx.rng, per, 200, 2000);
    e.i32(p).uvarint(plan.size + 1);
    writeBatch(e, plan, ctx.pattern, ctx.rng, baseOffset, ts);
    e.noTags();
  }
  e.noTags().noTags();
  e.endFrame(s);
}

function produceResponse(e, corr, topic, partitions, baseOffset) {
  e.reset();
  const s = e.beginFrame();
  e.responseHeader(API.Produce, 9, corr);
  e.uvarint(2).compactString(topic).uvarint(partitions.length + 1);
  for (const p of partitions) e.i32(p).i16(0).i64(baseOffset).i64(-1).i64(0).uvarint(1).compactString(null).noTags();
  e.noTags().i32(0).noTags();
  e.endFrame(s);
}

/** Fetch v12 (flexible): one topic, the given partitions, by name (v13 switched to topic IDs). */
function fetchRequest(e, corr, inst, topic, partitions, offset) {
  e.reset();
  const s = e.beginFrame();
  e.requestHeader(API.Fetch, 12, corr, who(inst, false), inst.id);
  e.i32(-1).i32(500).i32(1).i32(52428800).i8(0).i32(0).i32(-1);
  e.uvarint(2).compactString(topic).uvarint(partitions.length + 1);
  for (const p of partitions) e.i32(p).i32(7).i64(offset).i32(-1).i64(-1).i32(1048576).noTags();
  e.noTags();
  e.uvarint(1).compactString('').noTags();
  e.endFrame(s);
}

function fetchResponse(ctx, e, corr, topic, partitions, bytes, offset) {
  e.reset();
  const s = e.beginFrame();
  e.responseHeader(API.Fetch, 12, corr);
  e.i32(0).i16(0).i32(0);
  e.uvarint(2).compactString(topic).uvarint(partitions.length + 1);
  const per = Math.floor(bytes / partitions.length);
  const ts = Math.floor(ctx.w.clockUs / 1000) - 5000;
  for (const p of partitions) {
    const plan = planBatch(ctx.rng, per, 100, 1500);
    e.i32(p).i16(0).i64(offset + 100000).i64(offset + 100000).i64(0).uvarint(0).i32(-1);
    e.uvarint(plan.size + 1);
    writeBatch(e, plan, ctx.pattern, ctx.rng, offset, ts);
    e.noTags();
  }
  e.noTags().noTags();
  e.endFrame(s);
}

function pickPartitions(rng, max) {
  const n = rng.int(1, max);
  const first = rng.int(0, 11);
  return Array.from({ length: n }, (_, i) => (first + i) % 12);
}

// ---- (1) produce-heavy --------------------------------------------------------------------------

function produceScenario(ctx) {
  const conns = [];
  for (let i = 0; i < 100; i++) {
    const inst = newInstance(ctx, 'producer', ctx.rng.chance(0.7));
    for (const broker of BROKERS) conns.push(producerConn(ctx, inst, broker));
  }
  schedule(ctx, { active: 24, parked: conns });
}

/**
 * A long-lived client connection's opening: connect, then ApiVersions and its answer. Returns the
 * flow and the next correlation ID (the first is random, as a client's would be after others).
 */
function* openWithApiVersions(ctx, inst, broker) {
  const flow = ctx.open(inst.host, broker);
  yield IDLE;
  const corr = ctx.rng.int(1, 1000);
  apiVersionsRequest(ctx.e, corr, inst);
  ctx.sendSmall(flow, true);
  yield;
  apiVersionsResponse(ctx.e, corr);
  ctx.sendSmall(flow, false);
  return { flow, corr: corr + 1 };
}

function* producerConn(ctx, inst, broker) {
  if (ctx.full()) return;
  const rng = ctx.rng;
  const opened = yield* openWithApiVersions(ctx, inst, broker);
  const flow = opened.flow;
  let corr = opened.corr;
  const topic = rng.pick(TOPICS);
  metadataRequest(ctx.e, corr, inst, topic);
  ctx.sendSmall(flow, true);
  yield;
  metadataResponse(ctx.e, corr++, topic, 12);
  ctx.sendSmall(flow, false);
  yield IDLE;
  const e = new Enc(64 * 1024);
  let offset = rng.int(0, 1e9);
  while (!ctx.full()) {
    const partitions = pickPartitions(rng, 4);
    produceRequest(ctx, e, corr, inst, topic, partitions, rng.int(64 * 1024, MiB), offset);
    yield* ctx.sendLarge(flow, true, e);
    yield;
    produceResponse(ctx.e, corr++, topic, partitions, offset);
    ctx.sendSmall(flow, false);
    offset += 1000;
    yield IDLE;
  }
  flow.close();
}

// ---- (2) fetch-heavy ----------------------------------------------------------------------------

function fetchScenario(ctx) {
  const conns = [];
  for (let i = 0; i < 100; i++) {
    const inst = newInstance(ctx, 'consumer', ctx.rng.chance(0.7));
    for (const broker of BROKERS) conns.push(consumerConn(ctx, inst, broker));
  }
  schedule(ctx, { active: 24, parked: conns });
}

function* consumerConn(ctx, inst, broker) {
  if (ctx.full()) return;
  const rng = ctx.rng;
  const opened = yield* openWithApiVersions(ctx, inst, broker);
  const flow = opened.flow;
  let corr = opened.corr;
  yield IDLE;
  const topic = rng.pick(TOPICS);
  const e = new Enc(64 * 1024);
  let offset = rng.int(0, 1e9);
  while (!ctx.full()) {
    const partitions = pickPartitions(rng, 3);
    fetchRequest(ctx.e, corr, inst, topic, partitions, offset);
    ctx.sendSmall(flow, true);
    yield;
    fetchResponse(ctx, e, corr++, topic, partitions, rng.int(64 * 1024, MiB), offset);
    yield* ctx.sendLarge(flow, false, e);
    offset += 1000;
    yield IDLE;
  }
  flow.close();
}

// ---- (3) chatty -----------------------------------------------------------------------------------

/** Connections per 200 MB of chatty capture. */
const CHATTY_CONNECTIONS_PER_200MB = 100_000;
/** Bytes a chatty connection costs without heartbeats, and per heartbeat round trip (measured). */
const CHATTY_BASE_BYTES = 1500;
const CHATTY_HEARTBEAT_BYTES = 250;

function chattyScenario(ctx) {
  const planned = Math.max(100, Math.round((CHATTY_CONNECTIONS_PER_200MB * ctx.target) / (200 * 1e6)));
  const hosts = Array.from({ length: Math.max(1, Math.round(planned / 100)) }, () => newInstance(ctx, 'app', ctx.rng.chance(0.5)));
  let started = 0;
  const more = () => {
    if (ctx.full()) return null;
    const budget = (ctx.target - ctx.w.bytes) / Math.max(1, planned - started);
    const mean = Math.max(0, (budget - CHATTY_BASE_BYTES) / CHATTY_HEARTBEAT_BYTES);
    const heartbeats = Math.max(0, Math.round(mean * (0.5 + ctx.rng.next())));
    started++;
    return chattyConn(ctx, ctx.rng.pick(hosts), ctx.rng.pick(BROKERS), heartbeats);
  };
  schedule(ctx, { active: 200, more });
}

function* chattyConn(ctx, inst, broker, heartbeats) {
  const rng = ctx.rng;
  const flow = ctx.open(inst.host, broker);
  yield;
  let corr = 1;
  apiVersionsRequest(ctx.e, corr, inst);
  ctx.sendSmall(flow, true);
  yield;
  apiVersionsResponse(ctx.e, corr++);
  ctx.sendSmall(flow, false);
  yield;
  const topic = rng.pick(TOPICS);
  metadataRequest(ctx.e, corr, inst, topic);
  ctx.sendSmall(flow, true);
  yield;
  metadataResponse(ctx.e, corr++, topic, 3);
  ctx.sendSmall(flow, false);
  yield;
  for (let i = 0; i < heartbeats; i++) {
    heartbeatRequest(ctx.e, corr, inst, `group-${inst.clientId}`, 3);
    ctx.sendSmall(flow, true);
    yield;
    errorResponse(ctx.e, API.Heartbeat, 4, corr++);
    ctx.sendSmall(flow, false);
    yield;
  }
  flow.close();
}

// ---- (4) KIP-1313 telemetry mix ------------------------------------------------------------------

/** Per connection, the chance of each violation (each also counted in the manifest). */
const VIOLATIONS = {
  'zero-client-instance-id': 0.01,
  'client-instance-id-changed': 0.01,
  'client-instance-id-missing': 0.01,
  'client-id-after-first': 0.02,
  'telemetry-zero-id-with-header': 0.01,
  'telemetry-id-mismatch': 0.01,
  'telemetry-v1-without-instance-id': 0.01,
  'malformed-request-header': 0.005,
  'member-id-mismatch': 0.02,
};

/** Distinct PushTelemetry payloads the mix cycles through (made once per input: encoding them is slow). */
const PAYLOADS = 256;

function telemetryScenario(ctx) {
  // Their own random stream, so the rest of the mix is the same whatever the payloads hold.
  ctx.payloads = telemetryPayloads(new Rng(ctx.rng.int(1, 2 ** 31)), PAYLOADS);
  const instances = [];
  const more = () => {
    if (ctx.full()) return null;
    // A client instance talks to every broker; a few instances are reused from another host.
    if (instances.length === 0 || ctx.rng.chance(0.4)) {
      const inst = newInstance(ctx, 'svc', ctx.rng.chance(0.75));
      instances.push(inst);
      if (instances.length > 500) instances.shift();
    }
    const inst = ctx.rng.pick(instances);
    const faults = new Set();
    if (inst.id !== null) {
      for (const [kind, p] of Object.entries(VIOLATIONS)) if (ctx.rng.chance(p)) faults.add(kind);
    }
    return telemetryConn(ctx, inst, ctx.rng.pick(BROKERS), faults);
  };
  schedule(ctx, { active: 100, more });
}

function* telemetryConn(ctx, inst, broker, faults) {
  const rng = ctx.rng;
  const e = ctx.e;
  const kip = inst.id !== null;
  const flow = ctx.open(inst.host, broker);
  for (const f of faults) ctx.violation(f);
  yield;
  let corr = rng.int(1, 1000);
  let first = true;
  /** The header ID of the next request, with the connection's faults applied. */
  let headerId = faults.has('zero-client-instance-id') ? ZERO_ID : inst.id;
  const header = (apiKey, version, opts = {}) => {
    const clientId = first || !kip || opts.clientIdAgain ? inst.clientId : null;
    let id = opts.noId ? null : headerId;
    let tags = null;
    if (opts.malformed && id !== null) {
      // Tag 0 of 15 bytes: not a UUID (KIP-1313 fixes its size at 16).
      tags = [{ tag: 0, bytes: id.subarray(0, 15) }];
      id = null;
    }
    e.requestHeader(apiKey, version, corr, clientId, id, tags);
    first = false;
  };
  const exchange = function* (respond) {
    ctx.sendSmall(flow, true);
    yield;
    respond();
    ctx.sendSmall(flow, false);
    yield;
  };

  e.reset();
  let s = e.beginFrame();
  header(API.ApiVersions, 3);
  e.compactString(inst.software[0]).compactString(inst.software[1]).noTags();
  e.endFrame(s);
  yield* exchange(() => apiVersionsResponse(e, corr++));

  // GetTelemetrySubscriptions: v1 for KIP-1313 clients (ID in the header only), v0 for legacy ones
  // (a zero body ID asks the broker to assign one).
  const telemetryV0 = !kip || faults.has('telemetry-zero-id-with-header');
  let telemetryId = inst.id;
  // One subscription per instance, as a cluster hands it out (every broker the same set).
  const subscriptionId = (inst.subscriptionId ??= rng.int(1, 1e6));
  e.reset();
  s = e.beginFrame();
  header(API.GetTelemetrySubscriptions, telemetryV0 ? 0 : 1, { noId: faults.has('telemetry-v1-without-instance-id') });
  if (telemetryV0) e.raw(ZERO_ID);
  e.noTags();
  e.endFrame(s);
  yield* exchange(() => {
    e.reset();
    const r = e.beginFrame();
    e.responseHeader(API.GetTelemetrySubscriptions, telemetryV0 ? 0 : 1, corr++);
    e.i32(0).i16(0);
    if (telemetryV0) {
      // Legacy: the broker assigns an ID. With a header ID, a KIP-1313 broker should have refused.
      telemetryId = rng.bytes(16);
      e.raw(telemetryId);
    }
    e.i32(subscriptionId).uvarint(6).i8(0).i8(1).i8(2).i8(3).i8(4).i32(30000).i32(1048576).bool(true);
    e.uvarint(3).compactString('org.apache.kafka.producer.').compactString('org.apache.kafka.consumer.').noTags();
    e.endFrame(r);
  });

  const topic = rng.pick(TOPICS);
  const rounds = rng.int(2, 10);
  const big = new Enc(64 * 1024);
  for (let round = 0; round < rounds && !(round > 0 && ctx.full()); round++) {
    if (round === 1 && faults.has('client-instance-id-changed')) headerId = rng.bytes(16);
    const pushV0 = !kip || faults.has('telemetry-id-mismatch');
    // PushTelemetry with real OTLP metrics, compressed with one of Kafka's five codecs.
    big.reset();
    s = big.beginFrame();
    const payload = rng.pick(ctx.payloads);
    // Written by hand (header() writes to the shared encoder): tag 0 left out on the last push when faulty.
    big.requestHeader(API.PushTelemetry, pushV0 ? 0 : 1, corr, first || !kip ? inst.clientId : null,
      faults.has('client-instance-id-missing') && round === rounds - 1 ? null : headerId);
    first = false;
    if (pushV0) big.raw(faults.has('telemetry-id-mismatch') ? rng.bytes(16) : telemetryId);
    // The instance pushes on other connections too (it reuses them): none of its pushes is Terminating.
    big.i32(subscriptionId).bool(false).i8(payload.compressionType).uvarint(payload.blob.length + 1).raw(payload.blob).noTags();
    ctx.pushed(payload);
    big.endFrame(s);
    yield* ctx.sendLarge(flow, true, big);
    yield;
    errorResponse(e, API.PushTelemetry, pushV0 ? 0 : 1, corr++);
    ctx.sendSmall(flow, false);
    yield;

    // ConsumerGroupHeartbeat v0: KIP-1313 clients use their instance ID as MemberId.
    e.reset();
    s = e.beginFrame();
    header(API.ConsumerGroupHeartbeat, 0, { clientIdAgain: faults.has('client-id-after-first') && round === 0, malformed: faults.has('malformed-request-header') && round === 0 });
    const memberId = kip && !faults.has('member-id-mismatch') ? Buffer.from(inst.id).toString('base64url') : `${inst.clientId}-member`;
    e.compactString(`group-${topic}`).compactString(memberId).i32(round + 1).compactString(null).compactString(null).i32(-1);
    e.uvarint(2).compactString(topic).compactString(null).uvarint(0).noTags();
    e.endFrame(s);
    yield* exchange(() => {
      e.reset();
      const r = e.beginFrame();
      e.responseHeader(API.ConsumerGroupHeartbeat, 0, corr++);
      e.i32(0).i16(0).compactString(null).compactString(memberId).i32(round + 1).i32(5000).i8(-1).noTags();
      e.endFrame(r);
    });

    if (rng.chance(0.5)) {
      const partitions = pickPartitions(rng, 2);
      big.reset();
      produceRequest(ctx, big, corr, { ...inst, id: headerId, clientId: inst.clientId }, topic, partitions, rng.int(4096, 64 * 1024), round * 100);
      yield* ctx.sendLarge(flow, true, big);
      yield;
      produceResponse(e, corr++, topic, partitions, round * 100);
      ctx.sendSmall(flow, false);
      yield;
    }
  }
  flow.close();
}

const GENERATORS = {
  produce: produceScenario,
  fetch: fetchScenario,
  chatty: chattyScenario,
  telemetry: telemetryScenario,
};
