/** Where a command's output goes: stdout, or --output FILE. Many small writes become few large ones. */
import { closeSync, openSync, writeSync } from 'node:fs';
import { UsageError } from './options.js';

export interface TextStream {
  write(s: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

export class Out {
  private buf = '';
  private readonly fd: number | null;

  /** `lineBuffered`: flush after every write (follow mode: each finding as it is found). */
  constructor(
    private readonly stream: TextStream,
    file: string | undefined,
    private readonly lineBuffered = false,
  ) {
    if (file === undefined) {
      this.fd = null;
      return;
    }
    try {
      this.fd = openSync(file, 'w');
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      const why = code === 'ENOENT' ? 'no such folder' : code === 'EISDIR' ? 'is a directory' : code === 'EACCES' ? 'permission denied' : (e as Error).message;
      throw new UsageError(`cannot write --output ${file}: ${why}`);
    }
  }

  /** Output goes to a terminal (colour and width apply). */
  get isTTY(): boolean {
    return this.fd === null && this.stream.isTTY === true;
  }

  get columns(): number | undefined {
    return this.fd === null ? this.stream.columns : undefined;
  }

  write(s: string): void {
    this.buf += s;
    if (this.lineBuffered || this.buf.length >= 65536) this.flush();
  }

  flush(): void {
    if (this.buf.length === 0) return;
    if (this.fd === null) this.stream.write(this.buf);
    else writeSync(this.fd, this.buf);
    this.buf = '';
  }

  close(): void {
    this.flush();
    if (this.fd !== null) closeSync(this.fd);
  }
}
