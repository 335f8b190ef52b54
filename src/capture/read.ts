/**
 * Reading a capture: open the input, undo gzip if its magic says so (whatever the file is
 * called), recognise pcap or pcapng by their magic, and stream the bytes through the parser in
 * large chunks. Memory stays flat: records are parsed where they lie in the chunk, and only a
 * record cut by a chunk boundary is copied, into a tail buffer, to be completed from the next.
 */
import { fstatSync, readSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import type { Gunzip } from 'node:zlib';
import { untilReady } from '../base/blocking.js';
import type { RecordParser } from './parser.js';
import { PcapParser, pcapMagic } from './pcap.js';
import { PcapngParser, isPcapngStart } from './pcapng.js';
import { CaptureError, type CaptureStats, type PacketSink, type ReadCaptureOptions } from './types.js';

/** Bytes asked of the file per read: small enough to stay in a core's cache while parsed (1 MiB measured faster than 64 KiB-4 MiB). */
const CHUNK_BYTES = 1024 * 1024;
/**
 * Compressed bytes handed to zlib at a time. zlib pushes all the output of one write, and
 * deflate expands at most 1032:1, so this bounds the decompressed bytes waiting for the parser.
 */
const GZIP_PIECE_BYTES = 16 * 1024;
const MAGIC_BYTES = 4;

/** Reads a capture file, or standard input when `input` is '-', and hands every packet to `sink`. */
export async function readCapture(input: string, sink: PacketSink, opts: ReadCaptureOptions = {}): Promise<CaptureStats> {
  if (input === '-') {
    // Standard input's descriptor is read like a file's (a pipe from tcpdump, zcat or curl, or a
    // redirected file): Node's stream over it hands over 64 KiB at a time, four times slower.
    const total = stdinSize();
    return readFrom('-', descriptorChunks('-', 0, total), sink, opts, total, 'empty input');
  }
  const file = await openFile(input);
  try {
    const info = await file.stat().catch((err: unknown) => {
      throw failure(input, err);
    });
    if (info.isDirectory()) throw new CaptureError(`${input}: is a directory`);
    const total = info.isFile() ? info.size : null;
    return await readFrom(input, descriptorChunks(input, file.fd, total), sink, opts, total, 'empty file');
  } finally {
    await file.close().catch(() => undefined);
  }
}

/** The bytes left on standard input when it is a regular file (`kcid analyze - < x.pcap`), else null. */
function stdinSize(): number | null {
  try {
    const info = fstatSync(0);
    return info.isFile() ? Math.max(0, info.size) : null;
  } catch (err) {
    throw failure('-', err);
  }
}

/** Reads a capture from chunks of bytes (standard input, a test, ...); `name` starts every error message. */
export async function readCaptureStream(
  name: string,
  chunks: AsyncIterable<Buffer>,
  sink: PacketSink,
  opts: ReadCaptureOptions = {},
): Promise<CaptureStats> {
  return readFrom(name, chunks, sink, opts, null, 'empty input');
}

async function readFrom(
  name: string,
  chunks: AsyncIterable<Buffer>,
  sink: PacketSink,
  opts: ReadCaptureOptions,
  totalBytes: number | null,
  emptyWhat: string,
): Promise<CaptureStats> {
  const stats: CaptureStats = {
    file: name,
    format: 'pcap',
    gzip: false,
    packets: 0,
    bytes: 0,
    truncatedPackets: 0,
    truncatedAtFrame: 0,
    skippedBlocks: 0,
    damagedRecords: 0,
    notes: [],
  };
  const raw = new ChunkSource(withProgress(chunks, opts.onProgress, totalBytes));
  let source = raw;
  let parser: RecordParser | null = null;
  try {
    let head = await raw.peek(MAGIC_BYTES);
    if (head.length === 0) throw new CaptureError(`${name}: ${emptyWhat}`);
    if (head[0] === 0x1f && head[1] === 0x8b) {
      stats.gzip = true;
      source = new ChunkSource(gunzipChunks(name, raw, stats));
      head = await source.peek(MAGIC_BYTES);
      if (head.length === 0) throw new CaptureError(`${name}: empty after gzip decompression`);
    }
    parser = parserFor(name, head, sink, stats);
    await pump(source, parser, stats);
    return stats;
  } catch (err) {
    if (parser?.inSink) throw err; // the sink's own exception: not ours to rename
    throw failure(name, err);
  } finally {
    await source.close();
    if (source !== raw) await raw.close();
  }
}

function parserFor(name: string, head: Buffer, sink: PacketSink, stats: CaptureStats): RecordParser {
  if (head.length < MAGIC_BYTES) {
    throw new CaptureError(`${name}: too short to be a capture (${head.length} bytes: ${hex(head)})`);
  }
  const pcap = pcapMagic(head);
  if (pcap) {
    stats.format = 'pcap';
    return new PcapParser(name, sink, stats, pcap);
  }
  if (isPcapngStart(head)) {
    stats.format = 'pcapng';
    return new PcapngParser(name, sink, stats);
  }
  const other = OTHER_FORMATS.find((f) => head.subarray(0, f.magic.length).equals(f.magic));
  if (other) throw new CaptureError(`${name}: ${other.what} is not supported${other.hint}`);
  throw new CaptureError(`${name}: not a pcap or pcapng file (starts with ${hex(head.subarray(0, MAGIC_BYTES))})`);
}

/** Formats a capture is often found in that we do not read, so the message can say what to do. */
const OTHER_FORMATS = [
  { magic: [0x28, 0xb5, 0x2f, 0xfd], what: 'zstd-compressed input', hint: ': decompress it first' },
  { magic: [0xfd, 0x37, 0x7a, 0x58], what: 'xz-compressed input', hint: ': decompress it first' },
  { magic: [0x42, 0x5a, 0x68], what: 'bzip2-compressed input', hint: ': decompress it first' },
  { magic: [0x04, 0x22, 0x4d, 0x18], what: 'lz4-compressed input', hint: ': decompress it first' },
  { magic: [0x50, 0x4b, 0x03, 0x04], what: 'a zip archive', hint: ': extract the capture first' },
  { magic: [0xa1, 0xb2, 0xcd, 0x34], what: 'modified (Kuznetzov) pcap', hint: ': convert it with editcap -F pcap' },
  { magic: [0x34, 0xcd, 0xb2, 0xa1], what: 'modified (Kuznetzov) pcap', hint: ': convert it with editcap -F pcap' },
].map((f) => ({ ...f, magic: Buffer.from(f.magic) }));

async function pump(source: AsyncIterable<Buffer>, parser: RecordParser, stats: CaptureStats): Promise<void> {
  const feeder = new Feeder(parser);
  for await (const chunk of source) {
    if (chunk.length === 0) continue;
    stats.bytes += chunk.length;
    feeder.push(chunk);
    if (parser.done) break;
  }
  if (!parser.done) feeder.end();
  parser.finish();
}

/** Tail buffers larger than this are dropped once empty rather than kept for the rest of the input. */
const TAIL_KEEP_BYTES = 4 * 1024 * 1024;
const TAIL_INITIAL_BYTES = 64 * 1024;

/**
 * Hands chunks to a parser. Records are parsed in place in the chunk; only a record that spans
 * two chunks is copied, into `tail`, and only as many bytes as the parser says it needs. The
 * tail is a window [tailStart, tailEnd) that is compacted only when full, so a parser that
 * consumes it a little at a time (resynchronising) costs no more than one that takes it whole.
 */
class Feeder {
  private tail = Buffer.allocUnsafe(TAIL_INITIAL_BYTES);
  private tailStart = 0;
  private tailEnd = 0;
  /** Input offset of the first byte not yet consumed. */
  private consumed = 0;

  constructor(private readonly parser: RecordParser) {}

  push(chunk: Buffer): void {
    const parser = this.parser;
    let pos = 0;
    while (this.tailEnd > this.tailStart) {
      // Complete the tail with just what the parser asked for; max(1) guarantees progress.
      const have = this.tailEnd - this.tailStart;
      const take = Math.min(Math.max(1, parser.need - have), chunk.length - pos);
      this.append(chunk, pos, take);
      pos += take;
      if (this.tailEnd - this.tailStart < parser.need) return; // the chunk is used up
      this.parseTail(false);
      if (parser.done) return;
    }
    const stop = parser.parse(chunk, pos, chunk.length, this.consumed, false);
    this.consumed += stop - pos;
    if (stop < chunk.length && !parser.done) this.append(chunk, stop, chunk.length - stop);
  }

  end(): void {
    this.parseTail(true);
  }

  private parseTail(eof: boolean): void {
    const stop = this.parser.parse(this.tail, this.tailStart, this.tailEnd, this.consumed, eof);
    this.consumed += stop - this.tailStart;
    this.tailStart = stop;
    if (stop < this.tailEnd) return;
    this.tailStart = this.tailEnd = 0;
    if (this.tail.length > TAIL_KEEP_BYTES) this.tail = Buffer.allocUnsafe(TAIL_INITIAL_BYTES);
  }

  private append(chunk: Buffer, from: number, count: number): void {
    if (this.tailEnd + count > this.tail.length) {
      const live = this.tailEnd - this.tailStart;
      // Grow while the live bytes would fill more than half: compaction then always frees at
      // least as much room as it moves.
      if (2 * (live + count) > this.tail.length) {
        const bigger = Buffer.allocUnsafe(2 * (live + count));
        this.tail.copy(bigger, 0, this.tailStart, this.tailEnd);
        this.tail = bigger;
      } else {
        this.tail.copyWithin(0, this.tailStart, this.tailEnd);
      }
      this.tailStart = 0;
      this.tailEnd = live;
    }
    chunk.copy(this.tail, this.tailEnd, from, from + count);
    this.tailEnd += count;
  }
}

/** Chunks whose first bytes can be looked at before they are consumed. */
class ChunkSource implements AsyncIterable<Buffer> {
  private readonly it: AsyncIterator<Buffer>;
  private head: Buffer | null = null;

  constructor(chunks: AsyncIterable<Buffer>) {
    this.it = chunks[Symbol.asyncIterator]();
  }

  /** At least `n` first bytes (fewer only if the input is shorter), left in place for iteration. */
  async peek(n: number): Promise<Buffer> {
    let head = this.head ?? Buffer.alloc(0);
    while (head.length < n) {
      const next = await this.it.next();
      if (next.done) break;
      // A first chunk that is enough is kept as it is; short ones are copied, since the source
      // may reuse its buffer for the read that follows.
      head = head.length === 0 && next.value.length >= n ? next.value : Buffer.concat([head, next.value]);
    }
    this.head = head;
    return head;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Buffer> {
    if (this.head) {
      const head = this.head;
      this.head = null;
      yield head;
    }
    for (;;) {
      const next = await this.it.next();
      if (next.done) return;
      yield next.value;
    }
  }

  async close(): Promise<void> {
    await this.it.return?.();
  }
}

async function* withProgress(
  chunks: AsyncIterable<Uint8Array>,
  onProgress: ReadCaptureOptions['onProgress'],
  totalBytes: number | null,
): AsyncGenerator<Buffer> {
  let bytesRead = 0;
  for await (const chunk of chunks) {
    bytesRead += chunk.length;
    onProgress?.(bytesRead, totalBytes);
    // A plain Uint8Array gets a Buffer view (no copy): the parsers read with Buffer methods.
    yield Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  }
}

async function openFile(path: string): Promise<FileHandle> {
  try {
    return await open(path, 'r');
  } catch (err) {
    throw failure(path, err);
  }
}

/**
 * The bytes of a descriptor (a file, a pipe, standard input), one chunk at a time, read on this
 * thread into one buffer that the next read overwrites: a chunk is only overwritten after the
 * consumer asked for the chunk that follows it. Reading here rather than ahead on libuv's thread
 * pool is faster, measured: a 1 MiB chunk is still in this core's cache when the parser walks it,
 * and there is no thread hand-off per chunk.
 *
 * `size` is known for a regular file, whose reads return whole chunks. A pipe returns what is in
 * it (64 KiB at most on Linux): chunks are filled up before they are handed on. A pipe handed to
 * kcid in non-blocking mode answers EAGAIN when it is empty: with a part of a chunk, kcid hands
 * that on; with nothing, it waits ({@link untilReady}).
 */
async function* descriptorChunks(name: string, fd: number, size: number | null): AsyncGenerator<Buffer> {
  // A small file needs no large buffer: one byte more than the file sees its end in one read
  // (at least 64 KiB, for a file that is still being written).
  const bytes = size === null ? CHUNK_BYTES : Math.max(64 * 1024, Math.min(CHUNK_BYTES, size + 1));
  const buffer = Buffer.allocUnsafe(bytes);
  const read = (at: number) => readSync(fd, buffer, at, bytes - at, null);
  for (;;) {
    let have = 0;
    let ended = false;
    while (have < bytes) {
      let got: number;
      try {
        got = have > 0 ? read(have) : untilReady(() => read(0));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EAGAIN') break; // hand on what there is
        throw failure(name, err);
      }
      if (got === 0) {
        ended = true;
        break;
      }
      have += got;
      if (size !== null) break; // a file: one read per chunk
    }
    if (have > 0) yield buffer.subarray(0, have);
    if (ended) return;
    // A file is read without waiting: the event loop gets a turn between chunks (a megabyte
    // each), so that a signal handler (kcid export's clean-up on SIGINT) runs while it is read.
    if (size !== null) await new Promise(setImmediate);
  }
}

/**
 * Decompresses gzip (RFC 1952; several members in a row are one stream). Input goes to zlib in
 * small pieces and every output is handed on before the next piece, so what waits in memory
 * stays bounded whatever the compression ratio.
 */
async function* gunzipChunks(name: string, compressed: AsyncIterable<Buffer>, stats: CaptureStats): AsyncGenerator<Buffer> {
  // Loaded on the first gzip input, not with the module: most captures are not compressed.
  const { createGunzip } = await import('node:zlib');
  const gunzip = createGunzip({ chunkSize: CHUNK_BYTES });
  const ready: Buffer[] = [];
  // Set from an event handler, so declared so that TypeScript does not narrow it to null.
  let error = null as (Error & { code?: string }) | null;
  let produced = 0;
  gunzip.on('data', (chunk: Buffer) => {
    produced += chunk.length;
    ready.push(chunk);
  });
  gunzip.on('error', (err) => {
    error ??= err;
  });
  // zlib does not say where in its input it failed: only that it was past what it had already
  // finished with (bytesWritten) and inside the piece it was given last.
  let pieceStart = 0;
  let fed = 0;
  try {
    for await (const chunk of compressed) {
      for (let at = 0; at < chunk.length && !error; at += GZIP_PIECE_BYTES) {
        const piece = chunk.subarray(at, at + GZIP_PIECE_BYTES);
        pieceStart = fed;
        fed += piece.length;
        await settled(gunzip, (done) => gunzip.write(piece, done));
        while (ready.length > 0) yield ready.shift()!;
      }
      if (error) break;
    }
    if (!error) await settled(gunzip, () => gunzip.end(), 'end');
    while (ready.length > 0) yield ready.shift()!;
    if (!error) return;
    if (error.code === 'Z_BUF_ERROR') {
      stats.notes.push(`the gzip data ends early (after ${fed} compressed bytes): the capture is cut short`);
      return;
    }
    const from = Math.max(pieceStart, gunzip.bytesWritten);
    const what = `corrupt gzip data within compressed bytes ${from}-${fed} (${error.message})`;
    // Deflate cannot resynchronise, but what was decompressed before the damage is analysed, as for
    // gzip that ends early. Only damage before the first decompressed byte leaves nothing to read.
    if (produced > 0) {
      stats.notes.push(`${what}: the capture is cut short there`);
      return;
    }
    throw new CaptureError(`${name}: ${what}`);
  } finally {
    gunzip.destroy();
  }
}

/** Starts something on `stream`, then waits for its callback, for `event`, or for an error or close. */
function settled(stream: Gunzip, start: (done: () => void) => void, event?: string): Promise<void> {
  const events = event ? [event, 'error', 'close'] : ['error', 'close'];
  return new Promise((resolve) => {
    const done = (): void => {
      for (const e of events) stream.off(e, done);
      resolve();
    };
    for (const e of events) stream.on(e, done);
    start(done);
  });
}

/** What the file system says, in one line that starts with the input's name. */
const SYSTEM_ERRORS = new Map<string, string>([
  ['ENOENT', 'no such file'],
  ['ENOTDIR', 'no such file (a part of the path is not a directory)'],
  ['EISDIR', 'is a directory'],
  ['EACCES', 'cannot read: permission denied'],
  ['EPERM', 'cannot read: permission denied'],
  ['EIO', 'cannot read: input/output error'],
  ['ELOOP', 'cannot read: too many levels of symbolic links'],
  ['ENAMETOOLONG', 'cannot read: file name too long'],
  ['EMFILE', 'cannot read: too many open files'],
  ['ENFILE', 'cannot read: too many open files'],
  ['ENXIO', 'cannot read: no such device or address'],
  ['EAGAIN', 'cannot read: resource temporarily unavailable'],
]);

function failure(name: string, err: unknown): CaptureError {
  if (err instanceof CaptureError) return err;
  const code = typeof err === 'object' && err !== null && 'code' in err ? String(err.code) : '';
  const known = SYSTEM_ERRORS.get(code);
  if (known) return new CaptureError(`${name}: ${known}`);
  const message = err instanceof Error ? err.message : String(err);
  return new CaptureError(`${name}: cannot read: ${message.split('\n')[0]!.trim() || code || 'unknown error'}`);
}

function hex(bytes: Buffer): string {
  return [...bytes].map((b) => b.toString(16).padStart(2, '0')).join(' ');
}
