/**
 * A progress line on stderr, only on a TTY, only for inputs that take more than a second, and
 * never with --quiet. It rewrites itself in place and clears itself when done.
 */
import { cutMiddle } from '../report/wrap.js';
import { groupDigits } from '../base/digits.js';

const DELAY_MS = 1000;
const INTERVAL_MS = 200;

const mib = (n: number): string => `${(n / 1048576).toFixed(1)} MiB`;

/** Room kept free at the end of the line: a line as wide as the terminal wraps on some terminals. */
const MARGIN = 1;

export class Progress {
  private file = '';
  private started = 0;
  private lastDraw = 0;
  private drawn = false;

  private constructor(
    private readonly stream: { write(s: string): unknown; columns?: number },
    private readonly now: () => number,
  ) {}

  static forStream(stream: { write(s: string): unknown; isTTY?: boolean; columns?: number }, quiet: boolean, now: () => number = Date.now): Progress | null {
    return stream.isTTY === true && !quiet ? new Progress(stream, now) : null;
  }

  /**
   * Draws `rest` after the file name, the whole never wider than the terminal: the file name is
   * shortened in the middle first (its start and end say which file), then the line is cut.
   */
  private draw(rest: string): void {
    const columns = Math.max(20, (this.stream.columns ?? 80) - MARGIN);
    const fixed = 'kcid: '.length + rest.length;
    const file = cutMiddle(this.file, Math.max(24, columns - fixed));
    const line = `kcid: ${file}${rest}`;
    this.stream.write(`\r\x1b[2K${line.length > columns ? `${line.slice(0, columns - 1)}…` : line}`);
    this.drawn = true;
  }

  /**
   * The input is read and the report is being made and written (on 200,000 connections that takes
   * seconds): say so, rather than sit at 100%. Only when a progress line was already shown.
   */
  writing(): void {
    if (!this.drawn) return;
    this.file = '';
    this.stream.write('\r\x1b[2Kkcid: writing the report…');
  }

  start(file: string): void {
    this.file = file;
    this.started = this.now();
    this.lastDraw = 0;
  }

  update(read: number, total: number | null, packets: number, connections = 0, findings = 0): void {
    const now = this.now();
    if (now - this.started < DELAY_MS || now - this.lastDraw < INTERVAL_MS) return;
    this.lastDraw = now;
    const pct = total !== null && total > 0 ? ` ${Math.min(100, Math.floor((read / total) * 100))}%` : '';
    const rate = read / Math.max(0.001, (now - this.started) / 1000);
    const n = (x: number) => groupDigits(x);
    this.draw(`${pct} ${mib(read)} read (${mib(rate)}/s), ${n(packets)} packets, ${n(connections)} connections, ${n(findings)} findings`);
  }

  done(): void {
    if (this.drawn) this.stream.write('\r\x1b[2K');
    this.drawn = false;
  }
}
