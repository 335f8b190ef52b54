/**
 * Lean Kafka encoders for benchmark inputs, written from the protocol guide
 * (https://kafka.apache.org/protocol) and the message schemas of Apache Kafka 3.9, plus KIP-1313's
 * request header tag 0 and telemetry v1. They write into one growable buffer at an offset: no
 * intermediate arrays, so that gigabytes of frames are cheap to make.
 */

export class Enc {
  constructor(capacity = 4096) {
    this.buf = Buffer.allocUnsafe(capacity);
    this.pos = 0;
  }

  reset() {
    this.pos = 0;
    return this;
  }

  ensure(n) {
    if (this.pos + n <= this.buf.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(bigger, 0, 0, this.pos);
    this.buf = bigger;
  }

  i8(v) {
    this.ensure(1);
    this.buf.writeInt8(v, this.pos);
    this.pos += 1;
    return this;
  }

  bool(v) {
    return this.i8(v ? 1 : 0);
  }

  i16(v) {
    this.ensure(2);
    this.buf.writeInt16BE(v, this.pos);
    this.pos += 2;
    return this;
  }

  i32(v) {
    this.ensure(4);
    this.buf.writeInt32BE(v, this.pos);
    this.pos += 4;
    return this;
  }

  /** int64 from a safe integer (two's complement for negatives). */
  i64(v) {
    this.ensure(8);
    const hi = Math.floor(v / 4294967296);
    this.buf.writeInt32BE(hi, this.pos);
    this.buf.writeUInt32BE(v - hi * 4294967296, this.pos + 4);
    this.pos += 8;
    return this;
  }

  /** Unsigned LEB128 (UNSIGNED_VARINT). */
  uvarint(v) {
    this.ensure(5);
    v >>>= 0;
    while (v >= 0x80) {
      this.buf[this.pos++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.buf[this.pos++] = v;
    return this;
  }

  /** Zigzag then LEB128 (VARINT, record fields). */
  varint(v) {
    return this.uvarint(((v << 1) ^ (v >> 31)) >>> 0);
  }

  raw(src, off = 0, len = src.length - off) {
    this.ensure(len);
    src.copy(this.buf, this.pos, off, off + len);
    this.pos += len;
    return this;
  }

  /** STRING / NULLABLE_STRING: int16 length (-1 for null), then UTF-8 (ASCII here). */
  string(s) {
    if (s === null) return this.i16(-1);
    this.i16(s.length);
    this.ensure(s.length);
    this.pos += this.buf.write(s, this.pos, 'latin1');
    return this;
  }

  /** COMPACT_(NULLABLE_)STRING: uvarint length + 1 (0 for null), then the bytes. */
  compactString(s) {
    if (s === null) return this.uvarint(0);
    this.uvarint(s.length + 1);
    this.ensure(s.length);
    this.pos += this.buf.write(s, this.pos, 'latin1');
    return this;
  }

  /** Empty TAGGED_FIELDS. */
  noTags() {
    return this.uvarint(0);
  }

  /** Starts a frame: room for its int32 size. Returns the frame's start for {@link endFrame}. */
  beginFrame() {
    const start = this.pos;
    this.i32(0);
    return start;
  }

  /** Writes the size of the frame begun at `start`; returns the whole frame's length with its size. */
  endFrame(start) {
    this.buf.writeInt32BE(this.pos - start - 4, start);
    return this.pos - start;
  }

  /**
   * Request header (RequestHeader.json): v0 key, version, correlation id; v1 + ClientId (always an
   * int16 string, even in v2); v2 + tagged fields, tag 0 being KIP-1313's ClientInstanceId.
   * `tags`: extra raw tags [{tag, bytes}] written after tag 0, in the order given (for malformed cases).
   */
  requestHeader(apiKey, apiVersion, correlationId, clientId, instanceId, tags = null) {
    this.i16(apiKey).i16(apiVersion).i32(correlationId);
    const hv = requestHeaderVersion(apiKey, apiVersion);
    if (hv >= 1) this.string(clientId);
    if (hv >= 2) {
      const n = (instanceId === null ? 0 : 1) + (tags === null ? 0 : tags.length);
      this.uvarint(n);
      if (instanceId !== null) this.uvarint(0).uvarint(16).raw(instanceId);
      if (tags !== null) for (const t of tags) this.uvarint(t.tag).uvarint(t.bytes.length).raw(t.bytes);
    }
    return this;
  }

  /** Response header: v0 the correlation id; v1 (flexible APIs) + empty tagged fields. */
  responseHeader(apiKey, apiVersion, correlationId) {
    this.i32(correlationId);
    if (responseHeaderVersion(apiKey, apiVersion) === 1) this.noTags();
    return this;
  }
}

/** First flexible version (KIP-482) of the APIs the benchmark sends. */
const FIRST_FLEXIBLE = new Map([
  [0, 9], // Produce
  [1, 12], // Fetch
  [3, 9], // Metadata
  [12, 4], // Heartbeat
  [18, 3], // ApiVersions
  [68, 0], // ConsumerGroupHeartbeat
  [71, 0], // GetTelemetrySubscriptions
  [72, 0], // PushTelemetry
]);

export const API = {
  Produce: 0,
  Fetch: 1,
  Metadata: 3,
  Heartbeat: 12,
  ApiVersions: 18,
  ConsumerGroupHeartbeat: 68,
  GetTelemetrySubscriptions: 71,
  PushTelemetry: 72,
};

function flexible(apiKey, apiVersion) {
  const first = FIRST_FLEXIBLE.get(apiKey);
  if (first === undefined) throw new Error(`bench encoder: API key ${apiKey} not in the table`);
  return apiVersion >= first;
}

export function requestHeaderVersion(apiKey, apiVersion) {
  return flexible(apiKey, apiVersion) ? 2 : 1;
}

/** ApiVersions responses always use header v0 (KIP-511), whatever the version. */
export function responseHeaderVersion(apiKey, apiVersion) {
  if (apiKey === API.ApiVersions) return 0;
  return flexible(apiKey, apiVersion) ? 1 : 0;
}

// ---- record batches (magic v2, KIP-98) -----------------------------------------------------------

function varintSize(v) {
  let u = ((v << 1) ^ (v >> 31)) >>> 0;
  let n = 1;
  while (u >= 0x80) {
    u >>>= 7;
    n++;
  }
  return n;
}

function uvarintSize(v) {
  let n = 1;
  v >>>= 0;
  while (v >= 0x80) {
    v >>>= 7;
    n++;
  }
  return n;
}

/** Bytes of a record (its length varint included) with a null key and a value of `valueLen` bytes. */
function recordSize(offsetDelta, valueLen) {
  const body = 1 + varintSize(0) + varintSize(offsetDelta) + varintSize(-1) + varintSize(valueLen) + valueLen + varintSize(0);
  return varintSize(body) + body;
}

const BATCH_OVERHEAD = 61;

/**
 * Value sizes for records filling about `target` bytes of batch (the batch header included),
 * each between `minValue` and `maxValue` bytes.
 */
export function planBatch(rng, target, minValue, maxValue) {
  const values = [];
  let size = BATCH_OVERHEAD;
  while (size < target) {
    const v = Math.min(rng.int(minValue, maxValue), Math.max(1, target - size));
    values.push(v);
    size += recordSize(values.length - 1, v);
  }
  return { values, size };
}

/**
 * A v2 record batch: 61-byte header then records with null keys and values cut from `pattern`.
 * The CRC is left 0 (neither kcid nor tshark checks it; computing CRC-32C over gigabytes would
 * dominate the generator's time).
 */
export function writeBatch(e, plan, pattern, rng, baseOffset, timestampMs) {
  const { values, size } = plan;
  e.ensure(size);
  e.i64(baseOffset);
  e.i32(size - 12); // batchLength: bytes after this field
  e.i32(0); // partitionLeaderEpoch
  e.i8(2); // magic
  e.i32(0); // crc
  e.i16(0); // attributes: no compression, create time
  e.i32(values.length - 1); // lastOffsetDelta
  e.i64(timestampMs).i64(timestampMs);
  e.i64(-1).i16(-1).i32(-1); // producerId, producerEpoch, baseSequence: not idempotent
  e.i32(values.length);
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    const body = 1 + varintSize(0) + varintSize(i) + varintSize(-1) + varintSize(v) + v + varintSize(0);
    e.varint(body).i8(0).varint(0).varint(i).varint(-1).varint(v);
    e.raw(pattern, rng.int(0, pattern.length - v), v);
    e.varint(0);
  }
}

export { uvarintSize };
