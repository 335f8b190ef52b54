/**
 * A summary file read as a stream (`kcid merge`): a megabyte at a time, each element of its lists
 * (inputs, connections, findings, telemetry) parsed on its own, so no string holds the whole file
 * (V8's strings stop at about 512 MB: a 558 MB summary kcid wrote could not be read back). Any
 * JSON layout is read (kcid writes one line; jq pretty-prints); what it holds is then checked as
 * parseSummary checks it (summaryFromJson).
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { sanitize } from '../base/sanitize.js';
import { SummaryError, summaryFromJson } from './summary-io.js';

const LISTS = new Set(['inputs', 'connections', 'findings', 'telemetry']);

class Bytes {
  private buf = Buffer.alloc(0);
  private pos = 0;
  private offset = 0; // of buf[0] in the file
  private eof = false;
  private pieces: Buffer[] | null = null;
  private mark = 0;

  constructor(
    private readonly fd: number,
    private readonly chunk: number,
    readonly file: string,
  ) {}

  /** The next byte without taking it, or -1 at the end of the file. */
  peek(): number {
    if (this.pos >= this.buf.length) this.fill();
    return this.pos < this.buf.length ? this.buf[this.pos]! : -1;
  }

  take(): number {
    const b = this.peek();
    if (b >= 0) this.pos++;
    return b;
  }

  private fill(): void {
    if (this.eof) return;
    if (this.pieces !== null) {
      this.pieces.push(this.buf.subarray(this.mark));
      this.mark = 0;
    }
    const next = Buffer.allocUnsafe(this.chunk);
    const n = readSync(this.fd, next, 0, this.chunk, null);
    this.offset += this.buf.length;
    this.buf = next.subarray(0, n);
    this.pos = 0;
    if (n === 0) this.eof = true;
  }

  /** Where the next byte is in the file, for messages. */
  at(): number {
    return this.offset + this.pos;
  }

  record(): void {
    this.pieces = [];
    this.mark = this.pos;
  }

  recorded(): string {
    const pieces = this.pieces!;
    pieces.push(this.buf.subarray(this.mark, this.pos));
    this.pieces = null;
    return Buffer.concat(pieces).toString('utf8');
  }

  fail(what: string): never {
    throw new SummaryError(`${this.file}: not JSON (${what} at byte ${this.at()})`);
  }

  space(): number {
    for (;;) {
      const b = this.peek();
      if (b !== 0x20 && b !== 0x0a && b !== 0x0d && b !== 0x09) return b;
      this.pos++;
    }
  }

  expect(byte: number): void {
    if (this.space() !== byte) this.fail(`expected '${String.fromCharCode(byte)}'`);
    this.pos++;
  }

  /** Takes a string's bytes, the opening quote already taken. */
  private stringRest(): void {
    for (;;) {
      const b = this.take();
      if (b < 0) this.fail('unterminated string');
      if (b === 0x5c) {
        if (this.take() < 0) this.fail('unterminated string');
      } else if (b === 0x22) return;
    }
  }

  /** One JSON value's text, whatever it is, parsed. */
  value(): unknown {
    const first = this.space();
    if (first < 0) this.fail('unexpected end');
    this.record();
    if (first === 0x7b || first === 0x5b) {
      let depth = 0;
      do {
        const b = this.take();
        if (b < 0) this.fail('unexpected end');
        if (b === 0x22) this.stringRest();
        else if (b === 0x7b || b === 0x5b) depth++;
        else if (b === 0x7d || b === 0x5d) depth--;
      } while (depth > 0);
    } else if (first === 0x22) {
      this.pos++;
      this.stringRest();
    } else {
      for (let b = this.peek(); b >= 0 && b !== 0x2c && b !== 0x5d && b !== 0x7d && b !== 0x20 && b !== 0x0a && b !== 0x0d && b !== 0x09; b = this.peek()) this.pos++;
    }
    const text = this.recorded();
    try {
      return JSON.parse(text);
    } catch (e) {
      return this.fail(sanitize((e as Error).message).slice(0, 120));
    }
  }

  /** A list's elements, each parsed on its own. */
  list(): unknown[] {
    this.expect(0x5b);
    const out: unknown[] = [];
    if (this.space() === 0x5d) {
      this.pos++;
      return out;
    }
    for (;;) {
      out.push(this.value());
      const b = this.space();
      this.pos++;
      if (b === 0x5d) return out;
      if (b !== 0x2c) this.fail("expected ',' or ']'");
    }
  }
}

/**
 * The summary in `file`, read CHUNK bytes at a time. `first` sees the file's first bytes before
 * anything is parsed (merge refuses a capture given as a summary). Throws SummaryError.
 */
export function readSummaryFile(file: string, first: (bytes: Buffer) => void = () => {}, chunk = 1 << 20): ReturnType<typeof summaryFromJson> {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new SummaryError(`${file}: ${code === 'ENOENT' ? 'no such file' : `cannot read: ${(e as Error).message}`}`);
  }
  try {
    const head = Buffer.alloc(16);
    let n: number;
    try {
      n = readSync(fd, head, 0, 16, 0);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      throw new SummaryError(`${file}: ${code === 'EISDIR' ? 'is a directory' : `cannot read: ${(e as Error).message}`}`);
    }
    first(head.subarray(0, n));
    const r = new Bytes(fd, chunk, file);
    // A document that is not an object is left to summaryFromJson, which says what it is not.
    if (r.space() !== 0x7b) {
      const doc = r.value();
      if (r.space() >= 0) r.fail('unexpected data after the document');
      return summaryFromJson(doc, file);
    }
    r.take();
    const doc: Record<string, unknown> = {};
    if (r.space() === 0x7d) r.take();
    else {
      for (;;) {
        if (r.space() !== 0x22) r.fail('expected a key');
        const key = r.value() as string;
        r.expect(0x3a);
        const value = LISTS.has(key) && r.space() === 0x5b ? r.list() : r.value();
        Object.defineProperty(doc, key, { value, enumerable: true, configurable: true, writable: true });
        const b = r.space();
        r.take();
        if (b === 0x7d) break;
        if (b !== 0x2c) r.fail("expected ',' or '}'");
      }
    }
    if (r.space() >= 0) r.fail('unexpected data after the document');
    return summaryFromJson(doc, file);
  } finally {
    closeSync(fd);
  }
}
