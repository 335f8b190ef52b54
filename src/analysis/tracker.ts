/**
 * The part of listening to Kafka conversations that every command shares: one {@link ConnState}
 * per live connection, made on its first Kafka event and dropped at its end, and the counts of
 * ports and connections the run reports. {@link RequestWatcher} (kcid requests) and the judging
 * CaptureAnalyzer (analyzer.ts) grow from it.
 */
import type { KafkaConnection, KafkaListener, KafkaRequest, KafkaResponse, StreamNote } from '../kafka/events.js';
import { toMicros } from '../base/time.js';
import { ConnState } from './connection-state.js';
import type { RequestObserver } from './observer.js';
import { TelemetryCollector, type TelemetryDecoding } from './telemetry-events.js';
import type { ConnectionSummary } from './types.js';

export abstract class ConnectionTracker implements KafkaListener {
  readonly kafkaPorts = new Set<number>();
  /** Connections with a state (made on their first Kafka event, dropped at their end). */
  private liveStates = 0;
  /** Kafka connections that ended without a request, a response, a gap or a finding. */
  emptyConnections = 0;

  constructor(protected readonly input: number) {}

  connectionStart(c: KafkaConnection): void {
    this.kafkaPorts.add(c.broker.port);
  }

  abstract request(c: KafkaConnection, r: KafkaRequest): void;
  abstract response(c: KafkaConnection, r: KafkaResponse): void;
  abstract unanswered(c: KafkaConnection, r: KafkaRequest): void;
  abstract note(c: KafkaConnection, n: StreamNote): void;
  abstract connectionEnd(c: KafkaConnection, reason: string): void;

  /** Connections still open at the end of the capture are ended by the TCP stage's finish(). */
  get liveConnections(): number {
    return this.liveStates;
  }

  /**
   * The connection's state, made on its first Kafka event: a connection that never carries one (a
   * SYN flood, a health check that connects and leaves) costs no state at all.
   */
  protected state(c: KafkaConnection): ConnState {
    let s = c.listenerState as ConnState | null;
    if (s === null) {
      s = new ConnState(c, this.input, toMicros(c.tcp.firstTsSec, c.tcp.firstTsNsec));
      c.listenerState = s;
      this.liveStates++;
    }
    return s;
  }

  /** The state of a stream note's connection, with a gap counted. */
  protected noted(c: KafkaConnection, n: StreamNote): ConnState {
    const s = this.state(c);
    if (n.kind === 'gap') {
      s.gaps++;
      s.gapBytes += n.bytes;
    }
    return s;
  }

  /** The state of a connection that ended, taken from it; null (counted as empty) when it never had one. */
  protected ended(c: KafkaConnection): ConnState | null {
    const s = c.listenerState as ConnState | null;
    if (s === null) {
      this.emptyConnections++;
      return null;
    }
    c.listenerState = null;
    this.liveStates--;
    return s;
  }
}

/**
 * Listens without judging, for a command that shows the requests only (kcid requests): no rule is
 * run, no finding made, no latency kept and no connection summarised; each connection's state is
 * still kept for the observer (its endpoints, ClientIds and client instance ID).
 */
export class RequestWatcher extends ConnectionTracker {
  /** Never any: nothing is summarised. */
  readonly connections: ConnectionSummary[] = [];
  readonly unlisted = { connections: 0, requests: 0, responses: 0 };
  /** Never fed: the telemetry rules do not run. */
  readonly telemetry: TelemetryCollector;
  /** Kafka connections that ended, for the progress line. */
  passedConnections = 0;

  constructor(
    input: number,
    private readonly observer: RequestObserver,
    telemetry: TelemetryDecoding,
  ) {
    super(input);
    this.telemetry = new TelemetryCollector(input, telemetry);
  }

  request(c: KafkaConnection, r: KafkaRequest): void {
    const s = this.state(c);
    s.fold(r, false);
    this.observer.request?.(s, r);
  }

  response(c: KafkaConnection, r: KafkaResponse): void {
    const s = this.state(c);
    s.responses++;
    this.observer.response?.(s, r);
  }

  unanswered(c: KafkaConnection, r: KafkaRequest): void {
    const s = c.listenerState as ConnState | null;
    if (s !== null) this.observer.unanswered?.(s, r);
  }

  note(c: KafkaConnection, n: StreamNote): void {
    this.noted(c, n);
  }

  connectionEnd(c: KafkaConnection): void {
    const s = this.ended(c);
    if (s === null) return;
    this.passedConnections++;
    this.observer.connectionEnd?.(s);
  }
}
