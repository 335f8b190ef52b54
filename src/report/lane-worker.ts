/**
 * Worker-thread entry of one lane of `kcid requests` (report/lanes.ts): reads the whole input,
 * follows the connections of its share, and posts their NDJSON lines in chunks, each line's frame
 * beside it, for the lanes to be merged in frame order. A chunk waits while too many of this
 * lane's are not yet merged, so a lane that runs ahead holds a few MiB, not its output.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { analyzeInput } from '../analysis/run.js';
import { rowPredicate } from '../analysis/filters.js';
import { ByteText } from '../base/byte-text.js';
import { CaptureError } from '../capture/types.js';
import { RequestRows } from './requests.js';
import { writeRequestNdjson } from './requests-ndjson.js';
import { LANE_CHUNK_BYTES, LANE_MAX_IN_FLIGHT, LANE_MARK_PACKETS, type LaneJob, type LaneMessage } from './lanes.js';

const job = workerData as LaneJob;
const port = parentPort!;
const inFlight = new Int32Array(job.control);

async function run(): Promise<void> {
  const telemetry = job.telemetryMaxBytes === null ? null : { read: (await import('../telemetry/index.js')).readPushMetrics, maxBytes: job.telemetryMaxBytes };
  let startUs: number | null = null;
  const keep = rowPredicate(job.filters, () => startUs);
  let out = new ByteText(LANE_CHUNK_BYTES + 64 * 1024);
  let frames: number[] = [];
  let ends: number[] = [];
  let kept = 0;
  let orphans = 0;
  let lastFrame = 0;
  let packets = 0;
  let lastProgress = 0;

  /** The lowest frame a line this lane writes from now on can have. */
  const watermark = (): number => rows.waitingFrame() ?? lastFrame + 1;
  const post = (): void => {
    const message: LaneMessage = { kind: 'rows', bytes: out.buf.buffer as ArrayBuffer, offset: out.buf.byteOffset, frames: Float64Array.from(frames), ends: Int32Array.from(ends), watermark: watermark() };
    // Wait while this lane's unmerged chunks are at the bound (the merge wakes it).
    Atomics.add(inFlight, 0, 1);
    for (let n = Atomics.load(inFlight, 0); n > LANE_MAX_IN_FLIGHT; n = Atomics.load(inFlight, 0)) Atomics.wait(inFlight, 0, n, 1000);
    port.postMessage(message, [message.bytes]);
    out = new ByteText(LANE_CHUNK_BYTES + 64 * 1024);
    frames = [];
    ends = [];
  };

  const rows = new RequestRows(
    job.input,
    (row, s, us) => {
      if (!keep(row, s.clientIds, us)) return;
      kept++;
      if (!row.requestCaptured) orphans++;
      writeRequestNdjson(out, row);
      frames.push(row.frame);
      ends.push(out.pos);
      if (out.pos >= LANE_CHUNK_BYTES) post();
    },
    job.bodies,
    telemetry,
    false,
  );
  rows.captureStart = (us: number) => {
    startUs = us;
  };
  const tick = rows.tick.bind(rows);
  // Every packet moves the lane on; now and then the merge hears where it is, lines or not.
  rows.tick = (frame: number, us: number) => {
    tick(frame, us);
    lastFrame = frame;
    if (++packets % LANE_MARK_PACKETS === 0) {
      if (frames.length > 0) post();
      else port.postMessage({ kind: 'mark', watermark: watermark() } satisfies LaneMessage);
    }
  };
  const onProgress =
    job.progress === false
      ? undefined
      : (read: number, total: number | null) => {
          const now = Date.now();
          if (now - lastProgress < 100) return;
          lastProgress = now;
          port.postMessage({ kind: 'progress', read, total, packets } satisfies LaneMessage);
        };
  await analyzeInput(job.file, job.input, { ...job.opts, kafkaPorts: new Set(job.opts.kafkaPorts), lane: { index: job.lane, count: job.lanes }, ...(onProgress === undefined ? {} : { onProgress }) }, () => {}, rows);
  rows.finish();
  if (frames.length > 0) post();
  port.postMessage({ kind: 'done', kept, orphans } satisfies LaneMessage);
}

run().catch((e: unknown) => {
  port.postMessage({ kind: 'error', captureError: e instanceof CaptureError, message: e instanceof Error ? e.message : String(e) } satisfies LaneMessage);
});
