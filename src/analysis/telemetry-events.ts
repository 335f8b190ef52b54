/**
 * Collects one capture's KIP-714 telemetry requests as {@link TelemetryEvent}s for the summary:
 * each GetTelemetrySubscriptions with the subscription its response handed out, and each
 * PushTelemetry with its blob's size, the broker's answer and (when asked for) the decoded
 * metrics. The conversation rules (rules/telemetry-*.ts) judge them on the merged summary, so
 * pushes seen at different brokers are judged together.
 */
import type { KafkaRequest, KafkaResponse } from '../kafka/events.js';
import { bool, int, list, uuid } from '../kafka/fields.js';
import { API_KEY } from '../kafka/protocol.js';
import { isZeroUuid, uuidToBase64 } from '../kafka/uuid.js';
import { toMicros } from '../base/time.js';
import type { readPushMetrics } from '../telemetry/index.js';
import type { ConnState } from './connection-state.js';
import { requestOwner } from './owner.js';
import type { TelemetryEvent, TelemetryPushEvent } from './types.js';

type ReadPushMetrics = typeof readPushMetrics;

export interface TelemetryDecoding {
  /** Collect the conversation (subscriptions, pushes, their sizes and answers) for the telemetry rules. */
  collect: boolean;
  /**
   * PushTelemetry's metrics: 'all' decoded with `read` (an output shows them); 'lazy' decoded for the
   * rules that read them, with the decoder `load` brings at the first push (a capture without one
   * never loads it); 'none' only sized. Unless 'none', the Kafka stage keeps push frames whole.
   */
  decode: 'all' | 'lazy' | 'none';
  /** The most a blob may decompress to, and the largest PushTelemetry frame kept (--max-telemetry-bytes). */
  maxBytes: number;
  /** telemetry/index.ts's decoder, when run.ts loaded it up front ('all'). */
  read: ReadPushMetrics | null;
  /** Loads the decoder ('lazy'). */
  load: (() => Promise<ReadPushMetrics>) | null;
  /** Told of each kept event once it is complete: answered (or never to be) and its metrics decoded (follow mode's live checks). */
  onComplete?: (e: TelemetryEvent) => void;
}

/** Metrics bytes of pushes kept while the decoder loads (it loads within a chunk of input; this only bounds the wait). */
const MAX_WAITING_BYTES = 64 * 1024 * 1024;

interface Waiting {
  event: TelemetryPushEvent;
  blob: Uint8Array | null;
  frame: { complete: boolean; size: number };
}

/** Telemetry requests kept per input (pushes every few seconds per client: a day of a thousand clients); the rest are counted. */
export const MAX_TELEMETRY_EVENTS = 200_000;

export class TelemetryCollector {
  readonly events: TelemetryEvent[] = [];
  /** Events beyond MAX_TELEMETRY_EVENTS: counted, not kept. */
  dropped = 0;
  /** Pushes awaiting their answer: decoded at the request, so the blob is not kept meanwhile. */
  private readonly pending = new Map<KafkaRequest, TelemetryPushEvent>();
  private read: ReadPushMetrics | null;
  private loading: Promise<void> | null = null;
  /** Pushes that came while the decoder was loading, with their blobs. */
  private waiting: Waiting[] = [];
  private waitingBytes = 0;

  constructor(
    private readonly input: number,
    private readonly decoding: TelemetryDecoding,
  ) {
    this.read = decoding.read;
  }

  request(s: ConnState, r: KafkaRequest): void {
    const b = r.body;
    if (b === null || r.header.apiKey !== API_KEY.PushTelemetry) return;
    const h = r.header;
    const bodyId = nonZero(uuid(b, 'ClientInstanceId'));
    // The request's owner (owner.ts: a header v3 request after the first belongs to the connection's ID).
    const id = requestOwner(h.clientInstanceId, s.connectionId) ?? bodyId;
    const metricsBytes = r.metricsBytes;
    const event: TelemetryPushEvent = {
      kind: 'push',
      ...this.base(s, r, id === null ? s.telemetryId : uuidToBase64(id)),
      subscriptionId: int(b, 'SubscriptionId') ?? 0,
      terminating: bool(b, 'Terminating') ?? false,
      compressionType: int(b, 'CompressionType') ?? 0,
      metricsBytes,
      payload: null,
      payloadError: null,
    };
    if (this.decoding.decode !== 'none' && metricsBytes !== null) this.decode(event, r);
    this.pending.set(r, event);
  }

  response(s: ConnState, q: KafkaRequest, r: KafkaResponse): void {
    if (q.header.apiKey === API_KEY.PushTelemetry) {
      const event = this.pending.get(q);
      if (event === undefined) return;
      this.pending.delete(q);
      event.responseFrame = r.frame;
      event.responseUs = toMicros(r.tsSec, r.tsNsec);
      event.errorCode = r.errorCode;
      this.keep(event);
      return;
    }
    const b = r.body;
    if (q.header.apiKey !== API_KEY.GetTelemetrySubscriptions || b === null) return;
    const bodyId = nonZero(uuid(q.body, 'ClientInstanceId'));
    const assigned = nonZero(uuid(b, 'ClientInstanceId'));
    const id = requestOwner(q.header.clientInstanceId, s.connectionId) ?? bodyId ?? assigned;
    this.keep({
      kind: 'subscription',
      ...this.base(s, q, id === null ? s.telemetryId : uuidToBase64(id)),
      responseFrame: r.frame,
      responseUs: toMicros(r.tsSec, r.tsNsec),
      errorCode: r.errorCode,
      subscriptionId: int(b, 'SubscriptionId') ?? 0,
      acceptedCompressionTypes: (list(b, 'AcceptedCompressionTypes') ?? []).filter((v): v is number => typeof v === 'number'),
      pushIntervalMs: int(b, 'PushIntervalMs') ?? 0,
      telemetryMaxBytes: int(b, 'TelemetryMaxBytes') ?? 0,
      deltaTemporality: bool(b, 'DeltaTemporality') ?? false,
      requestedMetrics: (list(b, 'RequestedMetrics') ?? []).map((m) => (typeof m === 'string' ? m : '')),
    });
  }

  /** A push the broker never answered (or the capture missed the answer). */
  unanswered(q: KafkaRequest): void {
    const event = this.pending.get(q);
    if (event === undefined) return;
    this.pending.delete(q);
    this.keep(event);
  }

  /** Resolves once every push that waited for the decoder is decoded (call before finish). */
  async settle(): Promise<void> {
    if (this.loading !== null) await this.loading;
  }

  /** The events in capture order (they were kept as their answers came). */
  finish(): TelemetryEvent[] {
    for (const event of this.pending.values()) this.keep(event);
    this.pending.clear();
    return this.events.sort((a, b) => a.frame - b.frame);
  }

  private keep(event: TelemetryEvent): void {
    if (this.events.length < MAX_TELEMETRY_EVENTS) {
      this.events.push(event);
      this.complete(event);
    } else this.dropped++;
  }

  /** Events kept while the decoder loads, told to onComplete once their pushes are decoded. */
  private held: TelemetryEvent[] = [];

  /** Tells onComplete of a kept event, once no push of it still waits for the decoder. */
  private complete(event: TelemetryEvent): void {
    const onComplete = this.decoding.onComplete;
    if (onComplete === undefined) return;
    if (this.read === null && this.loading !== null) this.held.push(event);
    else onComplete(event);
  }

  private base(s: ConnState, r: KafkaRequest, instanceId: string | null) {
    return {
      input: this.input,
      connection: s.conn.tcp.id,
      client: s.client,
      clientIp: s.conn.client.ip,
      broker: s.broker,
      clientId: s.clientIds[0] ?? r.header.clientId ?? null,
      instanceId,
      apiVersion: r.header.apiVersion,
      correlationId: r.header.correlationId,
      frame: r.frame,
      timeUs: toMicros(r.tsSec, r.tsNsec),
      responseFrame: null,
      responseUs: null,
      errorCode: null,
      startSeen: s.conn.startSeen,
    };
  }

  private decode(event: TelemetryPushEvent, r: KafkaRequest): void {
    const frame = { complete: r.complete, size: r.size };
    if (this.read !== null) return this.apply(event, this.read(event.compressionType, r.metricsBlob, frame, this.decoding.maxBytes, this.view));
    // The first push: the decoder (protobufjs, the decompressors) loads now; pushes wait for it with their blobs.
    this.loading ??= this.decoding.load!().then((read) => {
      this.read = read;
      for (const w of this.waiting) this.apply(w.event, read(w.event.compressionType, w.blob, w.frame, this.decoding.maxBytes, this.view));
      this.waiting = [];
      this.waitingBytes = 0;
      const held = this.held;
      this.held = [];
      for (const e of held) this.decoding.onComplete?.(e);
    });
    const blob = r.metricsBlob;
    if (blob !== null && this.waitingBytes + blob.length > MAX_WAITING_BYTES) {
      event.payloadError = { kind: 'not-kept', message: 'metrics not decoded: more metrics arrived than kcid keeps while its decoder loads' };
      return;
    }
    this.waitingBytes += blob?.length ?? 0;
    this.waiting.push({ event, blob, frame });
  }

  /** Decoded for the rules only ('lazy'), pushes are read as the rules read them (metrics.ts, 'rules'). */
  private get view(): 'full' | 'rules' {
    return this.decoding.decode === 'lazy' ? 'rules' : 'full';
  }

  private apply(event: TelemetryPushEvent, result: ReturnType<ReadPushMetrics>): void {
    if (!result.ok) {
      event.payloadError = { kind: result.kind, message: result.message };
      return;
    }
    const m = result.metrics;
    // Decoded for the rules only: what they read, each list shared with the pushes before it that
    // carried the same (a client pushes the same metrics every interval), so memory follows the
    // distinct metric sets, not the pushes. An output that shows the pushes keeps them whole.
    const forRules = this.decoding.decode === 'lazy';
    event.payload = {
      decompressedBytes: result.decompressedBytes,
      metricCount: m.metricCount,
      points: m.points,
      resource: forRules ? this.shared(m.resource) : m.resource,
      scopes: forRules ? this.shared(m.scopes) : m.scopes,
      metrics: forRules ? this.shared(m.metrics) : m.metrics,
    };
  }

  /** Lists kept once per distinct content (at most MAX_SHARED of them; past that, as they come). */
  private readonly sharedLists = new Map<string, unknown[]>();

  private shared<T>(list: T[]): T[] {
    if (list.length === 0) return EMPTY as T[];
    const key = JSON.stringify(list);
    const known = this.sharedLists.get(key);
    if (known !== undefined) return known as T[];
    if (this.sharedLists.size < MAX_SHARED) this.sharedLists.set(key, list);
    return list;
  }
}

const EMPTY: unknown[] = [];
/** Distinct metric lists (and resources, scopes) shared between pushes per input. */
const MAX_SHARED = 10_000;

/** A body's ClientInstanceId when it names an instance: absent (v1), null and the zero UUID do not. */
function nonZero(id: Uint8Array | null | undefined): Uint8Array | null {
  return id === undefined || id === null || isZeroUuid(id) ? null : id;
}
