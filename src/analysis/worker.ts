/** Worker-thread entry: analyses one input and posts its part of the summary back. */
import { parentPort, workerData } from 'node:worker_threads';
import { CaptureError } from '../capture/types.js';
import { analyzeInput, type AnalyzeOptions } from './run.js';

interface Job {
  file: string;
  input: number;
  opts: Omit<AnalyzeOptions, 'kafkaPorts' | 'onProgress'> & { kafkaPorts: number[] };
}

const job = workerData as Job;
analyzeInput(job.file, job.input, { ...job.opts, kafkaPorts: new Set(job.opts.kafkaPorts) }).then(
  (result) => parentPort!.postMessage({ ok: true, result }),
  (e: unknown) =>
    parentPort!.postMessage({
      ok: false,
      captureError: e instanceof CaptureError,
      message: e instanceof Error ? e.message : String(e),
    }),
);
