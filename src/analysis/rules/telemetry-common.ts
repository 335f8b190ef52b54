/** What the KIP-714 conversation rules share: error codes, names, and how a push is described. */
import { errorName } from '../../kafka/protocol.js';
import { compressionName } from '../../telemetry/names.js';
import type { TelemetryPushEvent } from '../types.js';

/** The errors KIP-714's error table gives PushTelemetry. */
export const TELEMETRY_ERRORS = {
  INVALID_REQUEST: 42,
  UNSUPPORTED_COMPRESSION_TYPE: 76,
  INVALID_RECORD: 87,
  THROTTLING_QUOTA_EXCEEDED: 89,
  UNKNOWN_SUBSCRIPTION_ID: 117,
  TELEMETRY_TOO_LARGE: 118,
} as const;

/** "THROTTLING_QUOTA_EXCEEDED (89)". */
export function errorLabel(code: number): string {
  return `${errorName(code)} (${code})`;
}

/** How the broker answered a push: "the broker answered NONE (0)", or that the capture has no answer. */
export function answer(p: TelemetryPushEvent): string {
  return p.errorCode === null ? 'no answer in the capture' : `the broker answered ${errorLabel(p.errorCode)}`;
}

export { compressionName };

/** Milliseconds between two µs times, with up to 3 decimals. */
export function msBetween(fromUs: number, toUs: number): string {
  return String(Math.round(toUs - fromUs) / 1000);
}
