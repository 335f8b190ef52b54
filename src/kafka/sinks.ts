/**
 * Framer wiring: a conversation has a framer per direction, and each framer's sink hands frame
 * heads, frame ends, resync candidates and desyncs to the conversation's methods for that direction.
 */
import type { FrameSink, HeadAnswer, Plausibility } from './framer.js';

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
