/**
 * A progress line on stderr, only on a TTY, only for inputs that take more than a second, and
 * never with --quiet. It rewrites itself in place and clears itself when done.
 */
const DELAY_MS = 1000;
const INTERVAL_MS = 200;

const mib = (n: number): string => `${(n / 1048576).toFixed(1)} MiB`;

export class Progress {
  private file = '';
  private started = 0;
  private lastDraw = 0;
  private drawn = false;

  private constructor(
    private readonly stream: { write(s: string): unknown },
    private readonly now: () => number,
  ) {}

  static forStream(stream: { write(s: string): unknown; isTTY?: boolean }, quiet: boolean, now: () => number = Date.now): Progress | null {
    return stream.isTTY === true && !quiet ? new Progress(stream, now) : null;
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
    const n = (x: number) => x.toLocaleString('en-US');
    this.stream.write(
      `\r\x1b[2Kkcid: ${this.file}${pct} ${mib(read)} read (${mib(rate)}/s), ${n(packets)} packets, ${n(connections)} connections, ${n(findings)} findings`,
    );
    this.drawn = true;
  }

  done(): void {
    if (this.drawn) this.stream.write('\r\x1b[2K');
    this.drawn = false;
  }
}
