/**
 * Worker-thread entry: analyses the inputs it is sent, one at a time, and posts each one's part of
 * the summary back. One worker serves a whole lane of inputs: a thread and its modules are loaded
 * once, not once per capture.
 */
import { parentPort } from 'node:worker_threads';
import { CaptureError } from '../capture/types.js';
import { analyzeInput, type AnalyzeOptions } from './run.js';

export interface WorkerJob {
  file: string;
  input: number;
  opts: Omit<AnalyzeOptions, 'kafkaPorts' | 'onProgress' | 'signal'> & { kafkaPorts: number[] };
}

parentPort!.on('message', (job: WorkerJob) => {
  analyzeInput(job.file, job.input, { ...job.opts, kafkaPorts: new Set(job.opts.kafkaPorts) }).then(
    (result) => parentPort!.postMessage({ ok: true, result }),
    (e: unknown) =>
      parentPort!.postMessage({
        ok: false,
        captureError: e instanceof CaptureError,
        message: e instanceof Error ? e.message : String(e),
      }),
  );
});
