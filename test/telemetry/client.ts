/**
 * A KIP-1313 client of built captures that fetches telemetry subscriptions and pushes OTLP metrics,
 * for the telemetry rules' and the export's tests.
 */
import { API_KEY } from '../../src/kafka/protocol.js';
import type { KafkaConn, Scenario } from '../builder/scenario.js';
import {
  getTelemetrySubscriptionsRequestBody,
  getTelemetrySubscriptionsResponseBody,
  pushTelemetryRequestBody,
  pushTelemetryResponseBody,
  type GetTelemetrySubscriptionsResponseFields,
} from '../builder/kafka.js';
import { ID_A } from '../helpers.js';
import { compress, encodeMetrics, sampleMetrics } from './otlp.js';

const METRICS = encodeMetrics(sampleMetrics());

/**
 * One KIP-1313 client's telemetry on one connection: requests with header v2 and its ID, or (`idOnFirstOnly`,
 * the accepted revision's header v3) the ID on the connection's first request only.
 */
export class TelemetryClient {
  readonly c: KafkaConn;
  private first = true;
  private idSent = false;

  constructor(
    readonly s: Scenario,
    broker = '10.0.0.2:9092',
    client = '10.0.0.1:50000',
    private readonly id: Uint8Array = ID_A,
    private readonly idOnFirstOnly = false,
  ) {
    this.c = s.connect({ client, broker });
  }

  private clientId(): string | null {
    const id = this.first ? 'orders' : null;
    this.first = false;
    return id;
  }

  private instanceId(): Uint8Array | null {
    const send = !this.idOnFirstOnly || !this.idSent;
    this.idSent = true;
    return send ? this.id : null;
  }

  subscribe(o: Partial<GetTelemetrySubscriptionsResponseFields> = {}): void {
    const corr = this.c.request({ apiKey: API_KEY.GetTelemetrySubscriptions, apiVersion: 1, clientId: this.clientId(), clientInstanceId: this.instanceId(), body: getTelemetrySubscriptionsRequestBody(1) });
    this.c.respond(
      corr,
      getTelemetrySubscriptionsResponseBody(1, {
        throttleTimeMs: 0,
        errorCode: 0,
        subscriptionId: 7,
        acceptedCompressionTypes: [4, 3, 1],
        pushIntervalMs: 1000,
        telemetryMaxBytes: 1_048_576,
        deltaTemporality: true,
        requestedMetrics: ['org.apache.kafka.'],
        ...o,
      }),
    );
  }

  /** A push of `metrics` (sample OTLP by default) with `compressionType`, answered with `errorCode` (null: no answer). */
  async push(o: { subscriptionId?: number; terminating?: boolean; compressionType?: number; metrics?: Uint8Array; blob?: Uint8Array } = {}, errorCode: number | null = 0): Promise<void> {
    const type = o.compressionType ?? 4;
    const blob = o.blob ?? (await compress(type, o.metrics ?? METRICS));
    const corr = this.c.request({
      apiKey: API_KEY.PushTelemetry,
      apiVersion: 1,
      clientId: this.clientId(),
      clientInstanceId: this.instanceId(),
      body: pushTelemetryRequestBody(1, { subscriptionId: o.subscriptionId ?? 7, terminating: o.terminating ?? false, compressionType: type, metrics: blob }),
    });
    if (errorCode !== null) this.c.respond(corr, pushTelemetryResponseBody({ throttleTimeMs: 0, errorCode }));
  }
}
