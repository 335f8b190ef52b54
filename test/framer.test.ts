import { describe, expect, it } from 'vitest';
import { DONE, Framer, IMPLAUSIBLE, NEED_MORE, NOT_A_FRAME, PLAUSIBLE, STREAM, need, type FrameSink, type HeadAnswer, type Plausibility } from '../src/kafka/framer.js';

/** A frame: int32 size, then a 1-byte tag ('K' for a good frame) and filler. */
function frame(size: number, tag = 0x4b, fill = 0x00): Buffer {
  const b = Buffer.alloc(4 + size, fill);
  b.writeInt32BE(size, 0);
  if (size > 0) b[4] = tag;
  return b;
}

interface Event {
  kind: 'head' | 'end' | 'desync';
  frame: number;
  size?: number;
  head?: string;
  complete?: boolean;
  final?: boolean;
  skipped?: number;
  reason?: string;
}

class RecordingSink implements FrameSink {
  events: Event[] = [];
  /** headLen of every look that was answered. */
  looks: number[] = [];
  constructor(private readonly want: (size: number) => number = (size) => Math.min(size, 4)) {}
  frameHead(buf: Buffer, at: number, headLen: number, size: number, frame: number, final: boolean): HeadAnswer {
    const head = buf.subarray(at, at + headLen);
    if (head[0] !== 0x4b) return NOT_A_FRAME; // not one of our frames
    const want = this.want(size);
    if (want > headLen && !final) return need(want);
    // A frame that arrived whole is given whole (headLen = size): record what was asked for.
    this.looks.push(headLen);
    this.events.push({ kind: 'head', frame, size, head: head.subarray(0, Math.min(headLen, want)).toString('hex'), ...(final ? { final } : {}) });
    return DONE;
  }
  frameEnd(frame: number, _s: number, _n: number, complete: boolean): void {
    this.events.push({ kind: 'end', frame, complete });
  }
  plausibleStart(buf: Buffer, off: number, len: number): Plausibility {
    if (len < 5) return NEED_MORE;
    const size = buf.readInt32BE(off);
    return size >= 1 && size <= 1000 && buf[off + 4] === 0x4b ? PLAUSIBLE : IMPLAUSIBLE;
  }
  desync(skipped: number, reason: string, frame: number): void {
    this.events.push({ kind: 'desync', frame, skipped, reason });
  }
}

const OPTS = { maxFrameBytes: 1000, minFrameBytes: 1, initialHead: 4, maxPrefixBytes: 64 };

function feed(bytes: Buffer, cuts: number[], sink = new RecordingSink()): Event[] {
  const f = new Framer(sink, OPTS);
  let at = 0;
  let n = 1;
  for (const cut of [...cuts, bytes.length]) {
    if (cut > at) f.data(bytes, at, cut - at, n++, 0, 0);
    at = Math.max(at, cut);
  }
  f.end(0, 0);
  // Frame numbers depend on the cuts; compare shapes separately.
  return sink.events;
}

const shape = (events: Event[]) => events.map(({ frame: _f, ...rest }) => rest);

describe('Framer', () => {
  const stream = Buffer.concat([frame(10, 0x4b, 0x01), frame(1), frame(300, 0x4b, 0x07), frame(5, 0x4b, 0x02)]);
  const expected = [
    { kind: 'head', size: 10, head: '4b010101' },
    { kind: 'end', complete: true },
    { kind: 'head', size: 1, head: '4b' },
    { kind: 'end', complete: true },
    { kind: 'head', size: 300, head: '4b070707' },
    { kind: 'end', complete: true },
    { kind: 'head', size: 5, head: '4b020202' },
    { kind: 'end', complete: true },
  ];

  it('frames a stream delivered in one piece', () => {
    expect(shape(feed(stream, []))).toEqual(expected);
  });

  it('gives the same frames for every single split point and every pair of split points', () => {
    for (let i = 1; i < stream.length; i++) {
      expect(shape(feed(stream, [i]))).toEqual(expected);
    }
    for (let i = 1; i < stream.length; i += 7) {
      for (let j = i + 1; j < stream.length; j += 5) expect(shape(feed(stream, [i, j]))).toEqual(expected);
    }
  });

  it('reports a frame in the frame where its last byte arrives', () => {
    const events = feed(stream, [14, 20, 30]);
    // 14 bytes = the first frame; the 1-byte frame ends at byte 19 (piece 2); the 300-byte frame ends in piece 4.
    expect(events.filter((e) => e.kind === 'end').map((e) => e.frame)).toEqual([1, 2, 4, 4]);
  });

  it('asks for more prefix when the sink wants it, then skips the rest without copying', () => {
    const sink = new RecordingSink((size) => Math.min(size, 8));
    feed(stream, [6], sink);
    expect(sink.events.filter((e) => e.kind === 'head').map((e) => e.head)).toEqual([
      '4b01010101010101',
      '4b',
      '4b07070707070707',
      '4b02020202',
    ]);
  });

  it('resynchronises after a size larger than the maximum, reporting the skipped bytes', () => {
    const junk = Buffer.from([0x7f, 0xff, 0xff, 0xff, 0x00, 0x00]);
    const events = feed(Buffer.concat([junk, frame(10, 0x4b, 0x01)]), []);
    expect(shape(events)).toEqual([
      { kind: 'desync', skipped: 6, reason: 'frame size 2147483647 exceeds the maximum of 1000 bytes' },
      { kind: 'head', size: 10, head: '4b010101' },
      { kind: 'end', complete: true },
    ]);
  });

  it('resynchronises after a head the sink rejects, whether the frame came whole or in pieces', () => {
    const bad = frame(6, 0x58); // size 6, tag 'X'
    for (const cuts of [[5], [], [2], [12]]) {
      const events = feed(Buffer.concat([bad, frame(3)]), cuts);
      expect(shape(events)).toEqual([
        { kind: 'desync', skipped: 10, reason: 'bytes that do not parse as a Kafka message' },
        { kind: 'head', size: 3, head: '4b0000' },
        { kind: 'end', complete: true },
      ]);
    }
  });

  it('gives a frame that arrived whole to the sink whole, in one look, and a cut one as far as asked', () => {
    const sink = new RecordingSink();
    feed(stream, [], sink);
    // 10, 1 and 5 bytes whole; the 300-byte frame is larger than maxPrefixBytes (64): its first 4 bytes, as asked.
    expect(sink.looks).toEqual([10, 1, 4, 5]);
    const cut = new RecordingSink();
    feed(stream, [8], cut);
    expect(cut.looks).toEqual([4, 1, 4, 5]);
  });

  it('streams the rest of a frame to a sink that asks for it (STREAM), at every split point, and stops at a hole', () => {
    class StreamingSink extends RecordingSink {
      streamed: number[] = [];
      holes = 0;
      override frameHead(buf: Buffer, at: number, headLen: number, size: number, frame: number, final: boolean): HeadAnswer {
        // Frames of 300 bytes are streamed after their first 4; the others are read as RecordingSink reads them.
        if (size === 300 && !final && headLen < size && buf[at] === 0x4b) {
          this.streamed.push(...buf.subarray(at, at + headLen));
          return STREAM;
        }
        return super.frameHead(buf, at, headLen, size, frame, final);
      }
      frameBytes(buf: Buffer, off: number, len: number): void {
        this.streamed.push(...buf.subarray(off, off + len));
      }
      frameHole(): void {
        this.holes++;
      }
    }
    const big = frame(300, 0x4b, 0x07);
    for (let cut = 1; cut < stream.length; cut += 3) {
      const sink = new StreamingSink();
      const events = feed(stream, [cut], sink);
      // Larger than the prefix cap (64 here), it is never handed over whole: its first look, then the rest.
      expect(sink.streamed).toEqual([...big.subarray(4)]);
      expect(shape(events).filter((e) => e.kind === 'end')).toHaveLength(4);
    }
    const sink = new StreamingSink();
    const f = new Framer(sink, OPTS);
    f.data(big, 0, 100, 1, 0, 0);
    f.gap(50, 2);
    f.data(big, 150, big.length - 150, 3, 0, 0);
    f.end(0, 0);
    expect([sink.streamed.length, sink.holes]).toEqual([96, 1]);
  });

  it('large prefixes reused from the pool never mix the bytes of two connections', () => {
    // Two framers keep whole frames of 2-20 KB (each byte its frame's own), their segments interleaved.
    const opts = { ...OPTS, maxFrameBytes: 1 << 20, maxPrefixBytes: 1 << 20 };
    const seen: string[] = [];
    const whole = (name: string): FrameSink => ({
      frameHead(buf, at, headLen, size) {
        if (headLen < size) return need(size);
        const body = buf.subarray(at, at + size);
        seen.push(`${name}:${size}:${body.every((x) => x === (size & 0xff))}`);
        return DONE;
      },
      frameEnd() {},
      plausibleStart: () => IMPLAUSIBLE,
      desync() {},
    });
    const a = new Framer(whole('a'), opts);
    const b = new Framer(whole('b'), opts);
    const sizes = [2000, 9000, 20000, 3000, 15000, 4096, 17000];
    const stream = (k: number) => Buffer.concat(sizes.map((n, i) => frame(n + k + i, 0, (n + k + i) & 0xff).fill((n + k + i) & 0xff, 4)));
    const sa = stream(1);
    const sb = stream(2);
    for (let at = 0; at < Math.max(sa.length, sb.length); at += 1448) {
      if (at < sa.length) a.data(sa, at, Math.min(1448, sa.length - at), 1, 0, 0);
      if (at < sb.length) b.data(sb, at, Math.min(1448, sb.length - at), 1, 0, 0);
    }
    expect(seen.filter((x) => x.startsWith('a')).map((x) => x.split(':').slice(1).join(':'))).toEqual(sizes.map((n, i) => `${n + 1 + i}:true`));
    expect(seen.filter((x) => x.startsWith('b')).map((x) => x.split(':').slice(1).join(':'))).toEqual(sizes.map((n, i) => `${n + 2 + i}:true`));
  });

  it('keeps sync across a gap inside a frame it is skipping', () => {
    const sink = new RecordingSink();
    const f = new Framer(sink, OPTS);
    const big = frame(300, 0x4b, 0x07);
    f.data(big, 0, 100, 1, 0, 0);
    f.gap(150, 2);
    f.data(big, 250, big.length - 250, 3, 0, 0);
    const next = frame(2);
    f.data(next, 0, next.length, 4, 0, 0);
    expect(sink.events).toEqual([
      { kind: 'head', frame: 1, size: 300, head: '4b070707' },
      { kind: 'end', frame: 3, complete: true },
      { kind: 'head', frame: 4, size: 2, head: '4b00' },
      { kind: 'end', frame: 4, complete: true },
    ]);
  });

  it('after a gap where a size was due, scans for the next plausible frame', () => {
    const sink = new RecordingSink();
    const f = new Framer(sink, OPTS);
    f.gap(20, 1);
    const tail = Buffer.concat([Buffer.from([1, 2, 3]), frame(2)]);
    f.data(tail, 0, tail.length, 2, 0, 0);
    expect(sink.events).toEqual([
      { kind: 'desync', frame: 1, skipped: 3, reason: 'bytes missing from the capture' },
      { kind: 'head', frame: 2, size: 2, head: '4b00' },
      { kind: 'end', frame: 2, complete: true },
    ]);
  });

  it('a gap inside a frame cuts its head, not the framing: the sink reads what arrived, the next frame follows in sync', () => {
    // As a snapshot length leaves it: each packet's first bytes captured, the rest missing.
    const sink = new RecordingSink((size) => Math.min(size, 8));
    const f = new Framer(sink, OPTS);
    const a = frame(10, 0x4b, 0x01);
    const b = frame(6, 0x4b, 0x02);
    f.data(a, 0, 6, 1, 0, 0); // size and 2 of the 8 head bytes asked for
    f.gap(4, 2); // 4 of the frame's last 8 bytes missing
    f.data(a, 10, 4, 3, 0, 0); // its last 4 bytes
    f.data(b, 0, b.length, 4, 0, 0);
    expect(sink.events).toEqual([
      { kind: 'head', frame: 2, size: 10, head: '4b01', final: true },
      { kind: 'end', frame: 3, complete: true },
      { kind: 'head', frame: 4, size: 6, head: '4b0202020202' },
      { kind: 'end', frame: 4, complete: true },
    ]);
  });

  it('a gap that ends a frame in its head ends it there, still in sync', () => {
    const sink = new RecordingSink((size) => Math.min(size, 8));
    const f = new Framer(sink, OPTS);
    f.data(frame(10, 0x4b, 0x01), 0, 6, 1, 0, 0);
    f.gap(8, 2);
    f.data(frame(6, 0x4b, 0x02), 0, 10, 3, 0, 0);
    expect(sink.events).toEqual([
      { kind: 'head', frame: 2, size: 10, head: '4b01', final: true },
      { kind: 'end', frame: 2, complete: false },
      { kind: 'head', frame: 3, size: 6, head: '4b0202020202' },
      { kind: 'end', frame: 3, complete: true },
    ]);
  });

  it('a gap running past the end of a frame in its head loses sync: the head still counts, the frame is incomplete', () => {
    const sink = new RecordingSink((size) => Math.min(size, 8));
    const f = new Framer(sink, OPTS);
    f.data(frame(10, 0x4b, 0x01), 0, 6, 1, 0, 0);
    f.gap(9, 2);
    expect(sink.events).toEqual([
      { kind: 'head', frame: 2, size: 10, head: '4b01', final: true },
      { kind: 'end', frame: 2, complete: false },
    ]);
  });

  it('reports a frame still in progress at the end of the stream as incomplete', () => {
    const sink = new RecordingSink();
    const f = new Framer(sink, OPTS);
    const a = frame(10, 0x4b, 0x01);
    f.data(a, 0, 9, 1, 0, 0);
    f.end(0, 0);
    expect(sink.events).toEqual([
      { kind: 'head', frame: 1, size: 10, head: '4b010101' },
      { kind: 'end', frame: 1, complete: false },
    ]);
  });

  it('reports bytes that never resynchronise at the end of the stream', () => {
    const sink = new RecordingSink();
    const f = new Framer(sink, OPTS);
    const junk = Buffer.alloc(500, 0xee);
    f.data(junk, 0, junk.length, 1, 0, 0);
    f.end(0, 0);
    expect(sink.events).toEqual([{ kind: 'desync', frame: 1, skipped: 500, reason: 'frame size -286331154 is below the minimum of 1 bytes' }]);
  });
});
