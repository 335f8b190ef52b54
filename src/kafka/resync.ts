/**
 * Response resync: after bytes of the broker's stream were lost, where does the next response start?
 * A TCP segment start is a likely boundary (a broker writes each response with its own send), so there
 * a size and a pending correlation ID are enough. Anywhere else, bytes of a skipped payload can read as
 * a size and a pending correlation ID by chance (a capture that lost packets then paired responses with
 * the wrong requests): a candidate there is taken only when the response header of that request's
 * version and the start of its body decode as that request's response.
 */
import { topErrorCodeOffset } from './bodies.js';
import { IMPLAUSIBLE, NEED_MORE, PLAUSIBLE, SCAN_WINDOW, type Plausibility } from './framer.js';
import { decodeResponseHeader } from './headers.js';
import { protocol } from './protocol.js';
import { DecodeError } from './reader.js';
import type { PendingRequests } from './pending.js';

/**
 * Could the response to a pending `apiKey` v`apiVersion` request start mid-segment at buf[off] (its
 * int32 `size`, then the correlation ID already matched)? `len` bytes are available (at most
 * SCAN_WINDOW). The response header must decode in the version the request implies (v1's tagged
 * fields within the frame), and the body's top-level ErrorCode, where the schema puts it, must be one
 * Kafka defines. A response whose layout does not say where its ErrorCode is cannot be checked: only
 * a segment start places it.
 */
export function responseStartsHere(buf: Buffer, off: number, len: number, size: number, apiKey: number, apiVersion: number): Plausibility {
  const p = protocol();
  const headerVersion = p.responseHeaderVersion(apiKey, apiVersion);
  const response = p.api(apiKey)?.response;
  const at = response === undefined ? null : topErrorCodeOffset(response, apiVersion);
  if (headerVersion === null || at === null) return IMPLAUSIBLE;
  const frameEnd = off + 4 + size;
  const available = Math.min(off + len, frameEnd);
  let bodyStart: number;
  try {
    bodyStart = off + 4 + decodeResponseHeader(buf, off + 4, available, headerVersion, p).headerLength;
  } catch (e) {
    if (!(e instanceof DecodeError)) throw e;
    return available < frameEnd && len < SCAN_WINDOW ? NEED_MORE : IMPLAUSIBLE;
  }
  const errorAt = bodyStart + at;
  if (errorAt + 2 > frameEnd) return IMPLAUSIBLE;
  if (errorAt + 2 > off + len) return len < SCAN_WINDOW ? NEED_MORE : IMPLAUSIBLE;
  return p.error(buf.readInt16BE(errorAt)) !== undefined ? PLAUSIBLE : IMPLAUSIBLE;
}

/**
 * Could a response start at buf[off] (its int32 size)? Its correlation ID must be one a pending request
 * awaits. A segment start is a likely boundary; elsewhere the response must decode as that request's.
 */
export function plausibleResponse(buf: Buffer, off: number, len: number, segmentStart: boolean, pending: PendingRequests, maxFrameBytes: number): Plausibility {
  if (len < 8) return NEED_MORE;
  const size = buf.readInt32BE(off);
  if (size < 4 || size > maxFrameBytes) return IMPLAUSIBLE;
  const request = pending.get(buf.readInt32BE(off + 4));
  if (request === undefined) return IMPLAUSIBLE;
  if (segmentStart) return PLAUSIBLE;
  return responseStartsHere(buf, off, len, size, request.header.apiKey, request.header.apiVersion);
}
