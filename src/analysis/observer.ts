/**
 * What the analyzer tells the commands besides its summary: each finding as it is made, and, for
 * commands that want every request (kcid requests, the activity of `--format html`), each
 * request, response and connection end.
 */
import type { KafkaRequest, KafkaResponse } from '../kafka/events.js';
import type { ConnState } from './connection-state.js';
import type { Finding } from './types.js';

/** Receives findings as they are made (follow mode prints them at once). */
export type FindingSink = (f: Finding) => void;

/** Optional hooks for commands that want every request (kcid requests). */
export interface RequestObserver {
  /** The first packet of the input arrived (µs since the epoch). */
  captureStart?(us: number): void;
  request?(s: ConnState, r: KafkaRequest): void;
  response?(s: ConnState, r: KafkaResponse): void;
  unanswered?(s: ConnState, r: KafkaRequest): void;
  connectionEnd?(s: ConnState): void;
}
