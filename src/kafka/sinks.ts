/**
 * Framer wiring: a conversation has a framer per direction, and each framer's sink hands frame
 * heads, frame ends, resync candidates and desyncs to the conversation's methods for that direction.
 */
import { Framer, type FrameSink, type HeadAnswer, type Plausibility } from './framer.js';

/** Bytes of each frame handed to the first decode attempt: enough for nearly every request header. */
const INITIAL_HEAD = 96;
/**
 * The same for responses: the correlation id, the header's tagged fields and a top-level ErrorCode
 * fit; the few bodies kcid reads ask for more. Copying no more than that matters on small frames.
 */
const INITIAL_RESPONSE_HEAD = 16;
/** Smallest request: int16 key, int16 version, int32 correlation id (header v0). */
export const MIN_REQUEST_BYTES = 8;
/** Smallest response: int32 correlation id. */
export const MIN_RESPONSE_BYTES = 4;

/** The client's framer; `tokens`: SASL tokens flow (they may be empty frames). */
export function requestFramer(c: FrameHandlers, maxFrameBytes: number, maxPrefixBytes: number, tokens: boolean): Framer {
  return new Framer(new RequestSink(c), { maxFrameBytes, initialHead: INITIAL_HEAD, maxPrefixBytes, minFrameBytes: tokens ? 0 : MIN_REQUEST_BYTES });
}

/** The broker's framer. */
export function responseFramer(c: FrameHandlers, maxFrameBytes: number, maxPrefixBytes: number, tokens: boolean): Framer {
  return new Framer(new ResponseSink(c), { maxFrameBytes, initialHead: INITIAL_RESPONSE_HEAD, maxPrefixBytes, minFrameBytes: tokens ? 0 : MIN_RESPONSE_BYTES });
}

/** What a conversation does with the frames of its two directions. */
export interface FrameHandlers {
  requestHead(buf: Buffer, at: number, headLen: number, size: number, frame: number, final: boolean): HeadAnswer;
  requestEnd(frame: number, tsSec: number, tsNsec: number, complete: boolean): void;
  /** Resync of the client stream: could a request start here? */
  plausibleRequestStart(buf: Buffer, off: number, len: number): Plausibility;
  responseHead(buf: Buffer, at: number, headLen: number, size: number, frame: number, final: boolean): HeadAnswer;
  responseEnd(frame: number, tsSec: number, tsNsec: number, complete: boolean): void;
  /** The rest of a response the conversation streams (responseHead returned STREAM). */
  responseBytes(buf: Buffer, off: number, len: number): void;
  responseHole(): void;
  /** Resync of the broker stream: could a response start here? (`segmentStart`: a TCP segment began here.) */
  plausibleResponse(buf: Buffer, off: number, len: number, segmentStart: boolean): Plausibility;
  desync(from: 'client' | 'broker', skipped: number, reason: string, frame: number): void;
}

export class RequestSink implements FrameSink {
  constructor(private readonly c: FrameHandlers) {}
  frameHead(buf: Buffer, at: number, headLen: number, size: number, frame: number, final: boolean): HeadAnswer {
    return this.c.requestHead(buf, at, headLen, size, frame, final);
  }
  frameEnd(frame: number, tsSec: number, tsNsec: number, complete: boolean): void {
    this.c.requestEnd(frame, tsSec, tsNsec, complete);
  }
  plausibleStart(buf: Buffer, off: number, len: number): Plausibility {
    return this.c.plausibleRequestStart(buf, off, len);
  }
  desync(skipped: number, reason: string, frame: number): void {
    this.c.desync('client', skipped, reason, frame);
  }
}

export class ResponseSink implements FrameSink {
  constructor(private readonly c: FrameHandlers) {}
  frameHead(buf: Buffer, at: number, headLen: number, size: number, frame: number, final: boolean): HeadAnswer {
    return this.c.responseHead(buf, at, headLen, size, frame, final);
  }
  frameEnd(frame: number, tsSec: number, tsNsec: number, complete: boolean): void {
    this.c.responseEnd(frame, tsSec, tsNsec, complete);
  }
  frameBytes(buf: Buffer, off: number, len: number): void {
    this.c.responseBytes(buf, off, len);
  }
  frameHole(): void {
    this.c.responseHole();
  }
  plausibleStart(buf: Buffer, off: number, len: number, segmentStart: boolean): Plausibility {
    return this.c.plausibleResponse(buf, off, len, segmentStart);
  }
  desync(skipped: number, reason: string, frame: number): void {
    this.c.desync('broker', skipped, reason, frame);
  }
}
