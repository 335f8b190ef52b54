/**
 * What the pcap and pcapng parsers share: the push-parser contract the reader drives, the one
 * reused {@link PacketRef}, notes, and resynchronisation after a damaged record.
 *
 * Contract: the reader calls `parse(buf, pos, end, abs, eof)` with contiguous bytes; `abs` is the
 * input offset of `buf[pos]`. The parser consumes whole units only (headers, records, scanned
 * bytes) and returns the position of the first byte it did not consume. When it returns before
 * `end`, `need` says how many bytes from that position it must see to go on (always more than
 * it was given). On the last call (`eof`) it consumes everything.
 */
import type { CaptureStats, PacketRef, PacketSink } from './types.js';

/** No length field may make us hold more than this for one packet (Wireshark's largest is 128 MiB, for D-Bus/USB). */
export const MAX_PACKET_BYTES = 64 * 1024 * 1024;
/** How far past a damaged record we look for the next plausible one before giving up. */
export const RESYNC_WINDOW_BYTES = 8 * 1024 * 1024;
/** Seconds a record's timestamp may be from its neighbour's and still look plausible while resynchronising. */
export const PLAUSIBLE_TIME_GAP_SEC = 24 * 60 * 60;
const MAX_NOTES = 20;

/** Answers of {@link RecordParser.plausibleAt}; any positive value is a number of bytes needed. */
export const IMPLAUSIBLE = -1;
export const PLAUSIBLE = 0;

type ResyncCause = 'damaged' | 'truncated';

export abstract class RecordParser {
  /** Bytes needed from the position `parse()` returned before it can go on. */
  need = 0;
  /** Set when the parser gives up on the input: the reader stops reading. */
  done = false;
  /** True while the sink runs, so an exception then is known to be the sink's own. */
  inSink = false;

  protected readonly ref: PacketRef = {
    frame: 0,
    tsSec: 0,
    tsNsec: 0,
    linkType: 0,
    interfaceId: 0,
    data: Buffer.alloc(0),
    offset: 0,
    capLen: 0,
    origLen: 0,
  };
  /** What the format calls its units, for notes: 'record' (pcap) or 'block' (pcapng). */
  protected abstract readonly unit: string;
  /** Input offset of `buf[0]` during the current `parse()` call. */
  protected origin = 0;
  protected resyncing = false;
  private resyncCause: ResyncCause = 'damaged';
  private resyncFrom = 0;
  private resyncWhat = '';
  private resyncWhy = '';
  private omittedNotes = 0;

  constructor(
    protected readonly name: string,
    protected readonly sink: PacketSink,
    protected readonly stats: CaptureStats,
  ) {}

  parse(buf: Buffer, pos: number, end: number, abs: number, eof: boolean): number {
    this.origin = abs - pos;
    for (;;) {
      if (this.done) return end;
      const resyncing = this.resyncing;
      pos = resyncing ? this.resync(buf, pos, end, eof) : this.readRecords(buf, pos, end, eof);
      if (this.resyncing === resyncing) return pos;
    }
  }

  /**
   * Reads records from `pos` until it needs more bytes (sets `need`), finds damage (starts a
   * resynchronisation and returns the position to scan from), or, with `eof`, reaches `end`.
   */
  protected abstract readRecords(buf: Buffer, pos: number, end: number, eof: boolean): number;

  /**
   * While resynchronising: can a record (or block) start at `buf[p]`? Returns PLAUSIBLE,
   * IMPLAUSIBLE, or the number of bytes from `p` it needs to decide (never when `eof`).
   */
  protected abstract plausibleAt(buf: Buffer, p: number, end: number, eof: boolean): number;

  /** Called once after the last `parse()`. */
  finish(): void {
    if (this.omittedNotes > 0) this.stats.notes.push(`${this.omittedNotes} more notes like these were left out`);
  }

  /** Hands the packet described by `ref` (all fields but `frame` already set) to the sink. */
  protected deliver(): void {
    const ref = this.ref;
    const stats = this.stats;
    ref.frame = ++stats.packets;
    if (ref.capLen < ref.origLen) stats.truncatedPackets++;
    this.inSink = true;
    this.sink.onPacket(ref);
    this.inSink = false;
  }

  protected note(text: string): void {
    if (this.stats.notes.length < MAX_NOTES) this.stats.notes.push(text);
    else this.omittedNotes++;
  }

  protected abs(pos: number): number {
    return this.origin + pos;
  }

  /**
   * Stops before the incomplete unit at `pos`: asks for `need` bytes, or at the end of the input
   * deals with what is left. `what` names the unit ('record', 'enhanced packet block'), `wanted`
   * is its full size when known, else 0.
   */
  protected stopAt(pos: number, end: number, eof: boolean, need: number, wanted: number, what: string): number {
    if (!eof) {
      this.need = need;
      return pos;
    }
    if (pos === end) return pos;
    this.endsInsideRecord(pos, end, `${what} at byte ${this.abs(pos)}`, wanted);
    return pos + 1;
  }

  /**
   * The record at `pos` cannot be right: count it and look for the next plausible one. `what`
   * names it ("record at byte 40"), `why` says what is wrong ("captured length 2147483647
   * is impossible"). Scanning starts at `pos + 1`: the caller goes on from there.
   */
  protected damaged(pos: number, what: string, why: string): void {
    this.stats.damagedRecords++;
    this.startResync(pos, what, why, 'damaged');
  }

  /**
   * The input ends inside the record at `pos`. Usually the capture was cut short; but the
   * record's length may be the damage, so look in what is left for a plausible record first.
   */
  private endsInsideRecord(pos: number, end: number, what: string, wanted: number): void {
    const have = end - pos;
    const why = wanted > 0 ? `${have} of its ${wanted} bytes present` : `only ${have} bytes of its header present`;
    this.startResync(pos, what, why, 'truncated');
  }

  /** Scans byte by byte for a plausible record, from `pos`, which is past the bad record's start. */
  protected resync(buf: Buffer, pos: number, end: number, eof: boolean): number {
    const windowEnd = this.resyncFrom + RESYNC_WINDOW_BYTES - this.origin;
    while (pos < end) {
      if (pos > windowEnd) return this.giveUp(end);
      const verdict = this.plausibleAt(buf, pos, end, eof);
      if (verdict === PLAUSIBLE) {
        this.resynchronised(pos);
        return pos;
      }
      if (verdict !== IMPLAUSIBLE) {
        this.need = verdict;
        return pos;
      }
      pos++;
    }
    if (eof) this.resyncReachedEnd(end);
    else this.need = 1;
    return pos;
  }

  private resynchronised(pos: number): void {
    const at = this.abs(pos);
    if (this.resyncCause === 'truncated') {
      this.stats.damagedRecords++;
      this.note(`damaged ${this.resyncWhat}: its length points past the end of the input; resumed at byte ${at}`);
    } else {
      this.note(`damaged ${this.resyncWhat} (${this.resyncWhy}); skipped ${at - this.resyncFrom} bytes to the next plausible ${this.unit} at byte ${at}`);
    }
    this.resyncing = false;
  }

  private giveUp(end: number): number {
    if (this.resyncCause === 'truncated') {
      this.resyncReachedEnd(end);
    } else {
      const window = `${RESYNC_WINDOW_BYTES / 1048576} MiB`;
      this.note(`damaged ${this.resyncWhat} (${this.resyncWhy}); no plausible ${this.unit} in the next ${window}: stopped reading there`);
    }
    this.resyncing = false;
    this.done = true;
    return end;
  }

  private resyncReachedEnd(end: number): void {
    if (this.resyncCause === 'truncated') {
      this.stats.truncatedAtFrame = this.stats.packets + 1;
      this.note(`the input ends inside the ${this.resyncWhat} (${this.resyncWhy})`);
    } else {
      const skipped = this.abs(end) - this.resyncFrom;
      this.note(`damaged ${this.resyncWhat} (${this.resyncWhy}); nothing plausible follows: skipped the last ${skipped} bytes`);
    }
    this.resyncing = false;
  }

  private startResync(pos: number, what: string, why: string, cause: ResyncCause): void {
    this.resyncing = true;
    this.resyncCause = cause;
    this.resyncFrom = this.abs(pos);
    this.resyncWhat = what;
    this.resyncWhy = why;
  }
}

/** True when two timestamps (seconds) are close enough to belong to neighbouring records. */
export function nearInTime(a: number, b: number): boolean {
  return Math.abs(a - b) <= PLAUSIBLE_TIME_GAP_SEC;
}
