/**
 * NSS key log files (the format of SSLKEYLOGFILE: browsers, curl, Node's 'keylog' event, OpenSSL
 * 3.5+, Java's extract-tls-secrets, Go's KeyLogWriter), and the same lines embedded in a pcapng
 * Decryption Secrets Block. A line is `LABEL <client random, 64 hex digits> <secret in hex>`.
 * Secrets never leave this module except to derive keys: nothing here is printed.
 *
 * A file is read as a stream of lines (never whole into memory), a line longer than
 * MAX_KEYLOG_LINE is an error, and what is kept is compact: per line kcid uses, the 32-byte random,
 * a label byte, the secret's bytes, and 12 bytes of index (a few hundred bytes a line as a Map of
 * strings and Buffers). The files are read once per run and shared with --jobs workers as
 * SharedArrayBuffers (shared memory, not copied into messages): see SharedKeyLog.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { CaptureError } from '../capture/types.js';

/** The labels kcid uses; other NSS labels (EXPORTER_SECRET, early traffic, RSA) are read and ignored. */
export const KEYLOG_LABELS = [
  'CLIENT_RANDOM',
  'CLIENT_HANDSHAKE_TRAFFIC_SECRET',
  'SERVER_HANDSHAKE_TRAFFIC_SECRET',
  'CLIENT_TRAFFIC_SECRET_0',
  'SERVER_TRAFFIC_SECRET_0',
] as const;
export type KeyLogLabel = (typeof KEYLOG_LABELS)[number];

/** The longest line read: a key log line is at most 31 + 64 + 128 characters and two spaces. */
export const MAX_KEYLOG_LINE = 4096;

const OTHER_LABELS = new Set(['EXPORTER_SECRET', 'CLIENT_EARLY_TRAFFIC_SECRET', 'EARLY_EXPORTER_SECRET', 'RSA']);
const LABEL_INDEX = new Map<string, number>(KEYLOG_LABELS.map((l, i) => [l, i]));
const HEX = /^[0-9a-fA-F]+$/;
const CHUNK = 1 << 20;

/**
 * One source's lines, compact: `slab` holds records [32-byte random][label index][secret length]
 * [secret], `offsets` each record's start by line order, `keys` (uint64 as two uint32, little-end:
 * record number, then the random's first 4 bytes) sorted, so a random's records are found by a
 * binary search and come in line order.
 */
interface Store {
  slab: Uint8Array;
  offsets: Int32Array;
  keys: Uint32Array;
  count: number;
}

/** What --jobs workers receive: each file's store in shared memory, and its counts (no secret outside the buffers). */
export interface SharedKeyLog {
  files: { name: string; skipped: number; entries: number; slab: SharedArrayBuffer; offsets: SharedArrayBuffer; keys: SharedArrayBuffer; count: number }[];
}

class StoreBuilder {
  slab: Uint8Array = new Uint8Array(4096);
  used = 0;
  offsets: Int32Array = new Int32Array(256);
  count = 0;

  push(random: string, label: number, secret: string): void {
    const need = 34 + secret.length / 2;
    if (this.used + need > this.slab.length) this.slab = grow(this.slab, this.used + need);
    if (this.count === this.offsets.length) {
      const next = new Int32Array(this.offsets.length * 2);
      next.set(this.offsets);
      this.offsets = next;
    }
    const at = this.used;
    const b = Buffer.from(this.slab.buffer, this.slab.byteOffset, this.slab.byteLength);
    b.write(random, at, 32, 'hex');
    b[at + 32] = label;
    b[at + 33] = secret.length / 2;
    b.write(secret, at + 34, secret.length / 2, 'hex');
    this.offsets[this.count++] = at;
    this.used += need;
  }

  finish(shared: boolean): Store {
    const n = this.count;
    const alloc = (bytes: number) => (shared ? new SharedArrayBuffer(bytes) : new ArrayBuffer(bytes));
    const slab = new Uint8Array(alloc(this.used));
    slab.set(this.slab.subarray(0, this.used));
    const offsets = new Int32Array(alloc(n * 4));
    offsets.set(this.offsets.subarray(0, n));
    const keys = new Uint32Array(alloc(n * 8));
    for (let i = 0; i < n; i++) {
      keys[2 * i] = i;
      keys[2 * i + 1] = prefix(slab, offsets[i]!);
    }
    new BigUint64Array(keys.buffer, 0, n).sort();
    return { slab, offsets, keys, count: n };
  }
}

function grow(a: Uint8Array, need: number): Uint8Array {
  let size = a.length * 2;
  while (size < need) size *= 2;
  const next = new Uint8Array(size);
  next.set(a);
  return next;
}

const prefix = (b: Uint8Array, at: number): number => ((b[at]! << 24) | (b[at + 1]! << 16) | (b[at + 2]! << 8) | b[at + 3]!) >>> 0;

interface SourceInfo {
  name: string;
  skipped: number;
  entries: number;
  matched: number;
}

/** Reads one line (latin1, trimmed) into `into`; counts it as an entry, skipped, or neither (blank, comment, a label kcid does not use). */
function readLine(line: string, into: StoreBuilder, info: SourceInfo): void {
  line = line.trim();
  if (line === '' || line.startsWith('#')) return;
  const parts = line.split(/\s+/);
  const [label, random, secret] = parts;
  if (parts.length === 3 && OTHER_LABELS.has(label!) && HEX.test(random!) && HEX.test(secret!)) return;
  const index = parts.length === 3 ? LABEL_INDEX.get(label!) : undefined;
  if (
    index === undefined ||
    random!.length !== 64 ||
    !HEX.test(random!) ||
    secret!.length % 2 !== 0 ||
    secret!.length < 32 ||
    secret!.length > 128 ||
    !HEX.test(secret!)
  ) {
    info.skipped++;
    return;
  }
  into.push(random!, index, secret!);
  info.entries++;
}

/** Reads a key log file as a stream of lines; throws CaptureError (exit 2) for a line over MAX_KEYLOG_LINE or a read error. */
function readFileStore(path: string, info: SourceInfo, shared: boolean): Store {
  const into = new StoreBuilder();
  const chunk = Buffer.allocUnsafe(CHUNK);
  // The line cut by a chunk's end: at most MAX_KEYLOG_LINE bytes are carried.
  let carry = '';
  let lineNo = 0;
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (e) {
    throw new CaptureError(`--tls-keylog ${path}: cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  const tooLong = () => new CaptureError(`--tls-keylog ${path}: line ${lineNo + 1} is longer than ${MAX_KEYLOG_LINE} bytes (no key log line is)`);
  try {
    for (;;) {
      let n: number;
      try {
        n = readSync(fd, chunk, 0, CHUNK, null);
      } catch (e) {
        throw new CaptureError(`--tls-keylog ${path}: cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
      }
      if (n === 0) break;
      let start = 0;
      for (;;) {
        const end = chunk.indexOf(0x0a, start);
        if (end < 0 || end >= n) break;
        if (carry.length + end - start > MAX_KEYLOG_LINE) throw tooLong();
        readLine(carry + chunk.toString('latin1', start, end), into, info);
        carry = '';
        lineNo++;
        start = end + 1;
      }
      if (carry.length + n - start > MAX_KEYLOG_LINE) throw tooLong();
      carry += chunk.toString('latin1', start, n);
    }
  } finally {
    closeSync(fd);
  }
  if (carry !== '') readLine(carry, into, info);
  return into.finish(shared);
}

/** Secrets by client random, from any number of sources (files, the capture's own blocks). */
export class KeyLog {
  private readonly stores: Store[] = [];
  /** Per source: its name (a file name; never its content), lines skipped, connections matched. */
  readonly sources: SourceInfo[] = [];

  /** Key log files read once, for this thread or for sharing with workers (`shared`). */
  static readFiles(paths: readonly string[], shared = false): KeyLog {
    const log = new KeyLog();
    for (const path of paths) {
      const info = { name: path, skipped: 0, entries: 0, matched: 0 };
      log.stores.push(readFileStore(path, info, shared));
      log.sources.push(info);
    }
    return log;
  }

  /** The files' stores as shared memory (readFiles(paths, true) made them shareable). */
  share(): SharedKeyLog {
    return {
      files: this.sources.map((s, i) => {
        const st = this.stores[i]!;
        return {
          name: s.name,
          skipped: s.skipped,
          entries: s.entries,
          slab: st.slab.buffer as SharedArrayBuffer,
          offsets: st.offsets.buffer as SharedArrayBuffer,
          keys: st.keys.buffer as SharedArrayBuffer,
          count: st.count,
        };
      }),
    };
  }

  /** A key log over shared stores, with counts of its own (each analysis counts its matches). */
  static fromShared(shared: SharedKeyLog): KeyLog {
    const log = new KeyLog();
    for (const f of shared.files) {
      log.stores.push({ slab: new Uint8Array(f.slab), offsets: new Int32Array(f.offsets), keys: new Uint32Array(f.keys), count: f.count });
      log.sources.push({ name: f.name, skipped: f.skipped, entries: f.entries, matched: 0 });
    }
    return log;
  }

  /** Adds the lines of one source held in memory (a Decryption Secrets Block); returns its index. */
  add(name: string, text: string): number {
    const source = this.sources.length;
    const info = { name, skipped: 0, entries: 0, matched: 0 };
    this.sources.push(info);
    const into = new StoreBuilder();
    let start = 0;
    while (start < text.length) {
      let end = text.indexOf('\n', start);
      if (end < 0) end = text.length;
      // A block's line longer than any key log line cannot be one: skipped, not sliced.
      if (end - start > MAX_KEYLOG_LINE) info.skipped++;
      else readLine(text.slice(start, end), into, info);
      start = end + 1;
    }
    this.stores.push(into.finish(false));
    return source;
  }

  /** Distinct client randoms over every source. */
  get size(): number {
    const seen = new Set<string>();
    for (const st of this.stores) {
      for (let i = 0; i < st.count; i++) seen.add(Buffer.from(st.slab.buffer, st.slab.byteOffset + st.offsets[i]!, 32).toString('hex'));
    }
    return seen.size;
  }

  /**
   * The secrets for a ClientHello's random, counting the match for the first source that has it;
   * a later line (or source) for the same label replaces an earlier one.
   */
  lookup(clientRandom: Buffer): ReadonlyMap<string, Buffer> | undefined {
    if (clientRandom.length !== 32) return undefined;
    const want = prefix(clientRandom, 0);
    let secrets: Map<string, Buffer> | undefined;
    let first = -1;
    for (let s = 0; s < this.stores.length; s++) {
      const st = this.stores[s]!;
      // The first key whose prefix is `want`.
      let lo = 0;
      let hi = st.count;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (st.keys[2 * mid + 1]! < want) lo = mid + 1;
        else hi = mid;
      }
      for (let k = lo; k < st.count && st.keys[2 * k + 1] === want; k++) {
        const at = st.offsets[st.keys[2 * k]!]!;
        if (clientRandom.compare(st.slab, at, at + 32) !== 0) continue;
        if (first < 0) first = s;
        // A copy: the secret outlives no buffer it came from, and shared memory is never handed out.
        (secrets ??= new Map()).set(KEYLOG_LABELS[st.slab[at + 32]!]!, Buffer.from(st.slab.subarray(at + 34, at + 34 + st.slab[at + 33]!)));
      }
    }
    if (first < 0) return undefined;
    this.sources[first]!.matched++;
    return secrets;
  }
}
