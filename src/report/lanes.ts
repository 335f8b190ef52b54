/**
 * `kcid requests --format ndjson` of one large capture on several cores: lanes (worker threads,
 * report/lane-worker.ts) each read the whole input and follow the connections of their share
 * (net/shard.ts), and their lines are merged here in frame order. One thread's rows are in frame
 * order (report/requests.ts), every lane sees every packet, and a row's wait is judged by the
 * packets alone, so the merge writes exactly the bytes one thread writes.
 *
 * Each lane posts its lines in chunks, with each line's frame and a watermark (no later line of
 * the lane has a lower frame). A line goes out when every other lane has a buffered line with a
 * higher frame, a higher watermark, or has ended.
 *
 * Asked for with `kcid requests --jobs N`. Every lane reads and parses every packet, so lanes pay
 * where the work per connection outweighs reading (many small connections, --bodies), not on a few
 * connections carrying large frames.
 */
import type { Worker } from 'node:worker_threads';
import type { AnalyzeOptions } from '../analysis/run.js';
import type { Filters } from '../analysis/filters.js';
import { CaptureError } from '../capture/types.js';
import type { BodiesForm } from './requests.js';

/** Bytes of lines a lane gathers before it posts them. */
export const LANE_CHUNK_BYTES = 256 * 1024;
/** Chunks of one lane posted and not yet merged, at most (4 MiB). */
export const LANE_MAX_IN_FLIGHT = 16;
/** A lane says where it is at least this often (in packets), lines or not, so the merge never waits long on it. */
export const LANE_MARK_PACKETS = 65_536;

export interface LaneJob {
  file: string;
  input: number;
  lane: number;
  lanes: number;
  opts: Omit<AnalyzeOptions, 'kafkaPorts' | 'onProgress' | 'signal' | 'lane'> & { kafkaPorts: number[] };
  filters: Filters;
  bodies: BodiesForm | false;
  /** --bodies: PushTelemetry's metrics decoded, up to this many bytes; null: not decoded. */
  telemetryMaxBytes: number | null;
  /** Int32Array[1]: the lane's chunks posted and not yet merged. */
  control: SharedArrayBuffer;
  /** Post progress (lane 0, when a progress line is shown). */
  progress: boolean;
}

export type LaneMessage =
  | { kind: 'rows'; bytes: ArrayBuffer; offset: number; frames: Float64Array; ends: Int32Array; watermark: number }
  | { kind: 'mark'; watermark: number }
  | { kind: 'progress'; read: number; total: number | null; packets: number }
  | { kind: 'done'; kept: number; orphans: number }
  | { kind: 'error'; captureError: boolean; message: string };

// From src/report (tests) and the bundle in dist/cli alike this is dist/report/lane-worker.mjs.
const WORKER = new URL('../../dist/report/lane-worker.mjs', import.meta.url);

interface Chunk {
  bytes: Uint8Array;
  frames: Float64Array;
  ends: Int32Array;
  /** The next line to write. */
  next: number;
}

class Lane {
  readonly chunks: Chunk[] = [];
  watermark = 0;
  done = false;
  readonly inFlight: Int32Array;

  constructor(readonly worker: Worker, control: SharedArrayBuffer) {
    this.inFlight = new Int32Array(control);
  }

  /** The frame of the next line buffered, or null. */
  headFrame(): number | null {
    const c = this.chunks[0];
    return c === undefined ? null : c.frames[c.next]!;
  }

  /** No line of this lane to come has a frame at or below `frame`. */
  isPast(frame: number): boolean {
    const head = this.headFrame();
    return head !== null ? head > frame : this.done || this.watermark > frame;
  }
}

export interface LaneOptions {
  file: string;
  input: number;
  lanes: number;
  opts: AnalyzeOptions;
  filters: Filters;
  bodies: BodiesForm | false;
  telemetryMaxBytes: number | null;
  /** Where the merged lines go: bytes[from, to), whole lines. */
  write: (bytes: Uint8Array, from: number, to: number) => void;
  onProgress?: (read: number, total: number | null, packets: number) => void;
}

/** The rows of one input in `lanes` worker threads, merged into `write`; resolves to the rows kept and the orphan responses among them. */
export async function laneRows(o: LaneOptions): Promise<{ kept: number; orphans: number }> {
  const { Worker: WorkerThread } = await import('node:worker_threads');
  const { onProgress: _p, signal: _s, kafkaPorts, ...rest } = o.opts;
  const lanes: Lane[] = [];
  for (let i = 0; i < o.lanes; i++) {
    const control = new SharedArrayBuffer(4);
    const job: LaneJob = {
      file: o.file,
      input: o.input,
      lane: i,
      lanes: o.lanes,
      opts: { ...rest, kafkaPorts: [...kafkaPorts] },
      filters: o.filters,
      bodies: o.bodies,
      telemetryMaxBytes: o.telemetryMaxBytes,
      control,
      progress: i === 0 && o.onProgress !== undefined,
    };
    lanes.push(new Lane(new WorkerThread(WORKER, { workerData: job }), control));
  }
  let kept = 0;
  let orphans = 0;

  /** Writes every line that can go: the lowest buffered frame, while no other lane can still come below it. */
  const merge = (): void => {
    for (;;) {
      let best: Lane | null = null;
      let bestFrame = Infinity;
      for (const lane of lanes) {
        const f = lane.headFrame();
        if (f !== null && f < bestFrame) (best = lane), (bestFrame = f);
      }
      if (best === null) return;
      // The run of the lane's lines below every other lane's next possible frame goes out at once.
      let limit = Infinity;
      for (const lane of lanes) {
        if (lane === best) continue;
        if (!lane.isPast(bestFrame)) return;
        const head = lane.headFrame();
        limit = Math.min(limit, head !== null ? head : lane.done ? Infinity : lane.watermark);
      }
      const c = best.chunks[0]!;
      const from = c.next === 0 ? 0 : c.ends[c.next - 1]!;
      let n = c.next;
      while (n < c.frames.length && c.frames[n]! < limit) n++;
      o.write(c.bytes, from, c.ends[n - 1]!);
      c.next = n;
      if (n === c.frames.length) {
        best.chunks.shift();
        Atomics.sub(best.inFlight, 0, 1);
        Atomics.notify(best.inFlight, 0);
      }
    }
  };

  try {
    await new Promise<void>((resolve, reject) => {
      let running = lanes.length;
      for (const lane of lanes) {
        lane.worker.on('error', reject);
        lane.worker.on('exit', (code) => {
          if (!lane.done) reject(new Error(`a lane of kcid requests stopped (exit code ${code})`));
        });
        lane.worker.on('message', (m: LaneMessage) => {
          switch (m.kind) {
            case 'rows':
              lane.chunks.push({ bytes: new Uint8Array(m.bytes, m.offset), frames: m.frames, ends: m.ends, next: 0 });
              lane.watermark = m.watermark;
              break;
            case 'mark':
              lane.watermark = m.watermark;
              break;
            case 'progress':
              o.onProgress?.(m.read, m.total, m.packets);
              return;
            case 'done':
              lane.done = true;
              kept += m.kept;
              orphans += m.orphans;
              running--;
              break;
            case 'error':
              reject(m.captureError ? new CaptureError(m.message) : new Error(m.message));
              return;
          }
          try {
            merge();
          } catch (e) {
            reject(e);
            return;
          }
          if (running === 0) resolve();
        });
      }
    });
  } finally {
    await Promise.all(lanes.map((l) => l.worker.terminate()));
  }
  return { kept, orphans };
}
