/**
 * Several captures at once: `jobs` lanes (this thread and jobs - 1 worker threads) take the inputs
 * in turn, and the parts are merged in input order, so the result does not depend on which
 * finished first.
 */
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { CaptureError } from '../capture/types.js';
import { KeyLog } from '../tls/keylog.js';
import { analyzeInput, type AnalyzeOptions, type InputResult } from './run.js';
import type { WorkerJob } from './worker.js';
import type { CaptureSummary } from './types.js';

/**
 * One lane fewer than the cores: a single analysis already keeps more than one core busy (V8's
 * parallel garbage collection and background compilers: 1.4 cores on average, measured). On 2
 * cores two lanes were slower than one (4 x 268 MB produce-heavy: 0.67-0.83 s against 0.57-0.72 s).
 */
export function defaultJobs(): number {
  return Math.max(1, availableParallelism() - 1);
}

// Workers run the bundled worker: from src/analysis (tests) and the bundle in dist/cli alike this is dist/analysis/worker.mjs.
const WORKER = new URL('../../dist/analysis/worker.mjs', import.meta.url);

type WorkerReply = { ok: true; result: InputResult } | { ok: false; captureError: boolean; message: string };

/** A worker thread that analyses the inputs it is given, one at a time. */
class Lane {
  private readonly worker: Worker;

  constructor(WorkerThread: typeof Worker) {
    this.worker = new WorkerThread(WORKER);
  }

  analyze(file: string, input: number, opts: AnalyzeOptions): Promise<InputResult> {
    const { onProgress: _progress, signal: _signal, kafkaPorts, ...rest } = opts;
    const job: WorkerJob = { file, input, opts: { ...rest, kafkaPorts: [...kafkaPorts] } };
    return new Promise((resolve, reject) => {
      const onError = (e: Error) => reject(e);
      this.worker.once('error', onError);
      this.worker.once('message', (m: WorkerReply) => {
        this.worker.off('error', onError);
        if (m.ok) resolve(m.result);
        else reject(m.captureError ? new CaptureError(m.message) : new Error(m.message));
      });
      this.worker.postMessage(job);
    });
  }

  close(): Promise<number> {
    return this.worker.terminate();
  }
}

/**
 * Analyses every input and merges the parts. One input, or jobs = 1, runs in this thread (and
 * reports progress). Otherwise `jobs` lanes take inputs in turn: one lane is this thread (idle
 * otherwise), the others are worker threads, each started once.
 */
export async function analyzeAll(files: readonly string[], opts: AnalyzeOptions, jobs: number): Promise<CaptureSummary> {
  const results: InputResult[] = new Array(files.length);
  // Key logs read once for every input and lane: workers get them as shared memory, not a copy each.
  if (opts.tlsKeylogs !== undefined && opts.tlsKeylogs.length > 0 && opts.tlsKeyLog === undefined) {
    opts = { ...opts, tlsKeyLog: KeyLog.readFiles(opts.tlsKeylogs, true).share() };
  }
  if (files.length <= 1 || jobs <= 1 || files.includes('-')) {
    for (const [i, file] of files.entries()) results[i] = await analyzeInput(file, i, opts);
    return mergeResults(results);
  }
  const { onProgress: _progress, ...quiet } = opts;
  // Loaded here, not with the module: a single analysis does not pay for the worker machinery.
  const { Worker: WorkerThread } = await import('node:worker_threads');
  const workers = Array.from({ length: Math.min(jobs, files.length) - 1 }, () => new Lane(WorkerThread));
  let next = 0;
  let failed = false;
  const lane = async (worker: Lane | null): Promise<void> => {
    while (next < files.length && !failed) {
      const i = next++;
      try {
        if (worker === null) {
          results[i] = await analyzeInput(files[i]!, i, quiet);
          // A file is read on this thread without returning to the event loop, so the workers'
          // replies wait until here: let them in before this lane takes the next input.
          await new Promise(setImmediate);
        } else {
          results[i] = await worker.analyze(files[i]!, i, quiet);
        }
      } catch (e) {
        failed = true; // the other lanes take no new input
        throw e;
      }
    }
  };
  try {
    await Promise.all([lane(null), ...workers.map(lane)]);
  } finally {
    await Promise.all(workers.map((w) => w.close()));
  }
  return mergeResults(results);
}

export function mergeResults(results: readonly InputResult[]): CaptureSummary {
  const summary: CaptureSummary = { version: 1, inputs: [], connections: [], findings: [] };
  for (const r of results) {
    summary.inputs.push(r.input);
    // Not push(...list): spreading passes every element as an argument, and a capture with a few
    // hundred thousand connections or findings overflows the call stack.
    for (const c of r.connections) summary.connections.push(c);
    for (const f of r.findings) summary.findings.push(f);
    for (const t of r.telemetry ?? []) (summary.telemetry ??= []).push(t);
  }
  return summary;
}
