/**
 * Where a command's output goes: stdout, or --output FILE. Many small writes become few large ones.
 *
 * Standard output that is a pipe or a file is written with blocking writes to its descriptor, as C
 * tools do: process.stdout queues what a slow reader (`| less`, `| jq`, `| grep` on a full pipe)
 * has not taken yet in memory, and `kcid requests big.pcap | ...` grew by its whole output (636 MB
 * for 421,473 rows). A blocking write waits for the reader instead.
 */
import { closeSync, writeSync } from 'node:fs';
import { untilReady } from '../base/blocking.js';
import { openOutput } from '../base/safe-write.js';
import { ByteText } from '../base/byte-text.js';
import { UsageError } from './options.js';

export interface TextStream {
  write(s: string): unknown;
  isTTY?: boolean;
  columns?: number;
  /** The descriptor behind the stream (process.stdout has one): written directly when not a terminal. */
  fd?: number;
}

/** The reader of standard output went away (`kcid requests big.pcap | head`): not an error. */
export class OutputClosed extends Error {
  override readonly name = 'OutputClosed';
}

/**
 * Writes the first `length` bytes of `bytes` to `fd` (a write may take only part). Node makes a pipe
 * on standard output non-blocking, so a full pipe answers EAGAIN: kcid waits for its reader
 * ({@link untilReady}).
 */
function writeAll(fd: number, bytes: Uint8Array, length = bytes.length): void {
  let at = 0;
  while (at < length) {
    try {
      at += untilReady(() => writeSync(fd, bytes, at, length - at));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EPIPE') throw new OutputClosed('standard output was closed');
      throw e;
    }
  }
}

/** Why a file could not be written, in the words `-o` and `--write-baseline` share. */
export function writeProblem(e: unknown): string {
  const code = (e as NodeJS.ErrnoException).code;
  return code === 'ENOENT' ? 'no such folder' : code === 'EISDIR' ? 'is a directory' : code === 'EACCES' ? 'permission denied' : (e as Error).message;
}

/** Bytes gathered for one write to a descriptor. */
const CHUNK_BYTES = 256 * 1024;

export class Out {
  /** Text for a stream without a descriptor (a terminal, a test's stream). */
  private buf = '';
  /**
   * The text encoded as it comes, into one buffer written when full (for a stream without a
   * descriptor, decoded into `buf` instead). Strings added up and encoded at the end make a rope
   * that costs more to flatten than the encoding. Writers that make bytes write here directly.
   */
  readonly bytes = new ByteText(CHUNK_BYTES);
  /** Written directly: --output's file, or standard output's descriptor when it is a pipe or a file. */
  private readonly fd: number | null = null;
  /** The descriptor is --output's, closed at the end. */
  private readonly ownsFd: boolean = false;

  /** `lineBuffered`: flush after every write (follow mode: each finding as it is found). */
  constructor(
    private readonly stream: TextStream,
    file: string | undefined,
    private readonly lineBuffered = false,
  ) {
    if (file === undefined) {
      if (typeof stream.fd === 'number' && stream.isTTY !== true) this.fd = stream.fd;
      return;
    }
    try {
      this.fd = openOutput(file);
      this.ownsFd = true;
    } catch (e) {
      throw new UsageError(`cannot write --output ${file}: ${writeProblem(e)}`);
    }
  }

  /** Output goes to a terminal (colour and width apply). */
  get isTTY(): boolean {
    return !this.ownsFd && this.stream.isTTY === true;
  }

  /** Output goes to --output's file. */
  get toFile(): boolean {
    return this.ownsFd;
  }

  get columns(): number | undefined {
    return this.ownsFd ? undefined : this.stream.columns;
  }

  write(s: string): void {
    if (this.fd === null) {
      this.buf += s;
      if (this.lineBuffered || this.buf.length >= 65536) this.flush();
      return;
    }
    // A UTF-16 code unit is at most 3 bytes of UTF-8 (a surrogate pair, two units, is 4).
    if (s.length * 3 > CHUNK_BYTES - this.bytes.pos) {
      this.flush();
      if (s.length * 3 > CHUNK_BYTES) return writeAll(this.fd, Buffer.from(s, 'utf8'));
    }
    this.bytes.utf8(s);
    if (this.lineBuffered) this.flush();
  }

  /** A writer put a piece (a row) into {@link bytes}: written out when the buffer is full (or at once, line-buffered). */
  wrote(): void {
    const b = this.bytes;
    if (this.fd === null) {
      this.buf += Buffer.from(b.buf.buffer, b.buf.byteOffset, b.pos).toString('utf8');
      b.pos = 0;
      if (this.lineBuffered || this.buf.length >= 65536) this.flush();
    } else if (this.lineBuffered || b.pos >= CHUNK_BYTES) this.flush();
  }

  flush(): void {
    if (this.fd !== null) {
      const b = this.bytes;
      if (b.pos === 0) return;
      const used = b.pos;
      b.pos = 0;
      writeAll(this.fd, b.buf, used);
      // A piece far larger than the chunk (a huge body's JSON) grew the buffer: it goes back to its size.
      if (b.buf.length > 4 * CHUNK_BYTES) b.buf = Buffer.allocUnsafe(CHUNK_BYTES);
      return;
    }
    if (this.buf.length === 0) return;
    const text = this.buf;
    this.buf = '';
    this.stream.write(text);
  }

  close(): void {
    this.flush();
    if (this.ownsFd) closeSync(this.fd!);
  }
}
