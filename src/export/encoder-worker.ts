/**
 * Worker-thread entry (bundled as dist/export/encoder-worker.mjs): encodes the row groups of the
 * Parquet files an export writes (encode-group.ts). See src/export/encoder.ts for why a thread,
 * and for the protocol: messages come in order on the main thread's port; after each one this thread
 * counts it done in the shared state and wakes the main thread, and a failure is posted on the
 * reply port first.
 */
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { collectIfGrown } from './collect.js';
import { drop, handle } from './encode-group.js';
import { DONE, type EncoderFailure, type EncoderMessage } from './encoder-protocol.js';

const { state, replies, port } = workerData as { state: Int32Array; replies: MessagePort; port?: MessagePort };

// Messages come on a port of the main thread's (the watchdog that started this thread is its parent: encoder.ts).
(port ?? parentPort!).on('message', (m: EncoderMessage) => {
  try {
    handle(m);
    // This thread's live heap is about one row group: a full collection is cheap, and keeps it flat.
    if (m.op === 'group') collectIfGrown();
  } catch (e) {
    drop(m.id);
    const failure: EncoderFailure = { id: m.id, message: (e as Error).message ?? String(e), code: (e as NodeJS.ErrnoException).code ?? null };
    replies.postMessage(failure);
  }
  Atomics.add(state, DONE, 1);
  Atomics.notify(state, DONE);
});
