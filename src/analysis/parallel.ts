/**
 * Several captures at once: each input is analysed on a worker thread (at most `jobs` at a time),
 * and the parts are merged in input order, so the result does not depend on which finished first.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { CaptureError } from '../capture/types.js';
import { analyzeInput, type AnalyzeOptions, type InputResult } from './run.js';
import type { CaptureSummary } from './types.js';

export function defaultJobs(): number {
  return Math.max(1, availableParallelism());
}

// Workers run the compiled code: from src/analysis (tests) and dist/analysis alike this is dist/analysis/worker.js.
const WORKER = new URL('../../dist/analysis/worker.js', import.meta.url);

function inWorker(file: string, input: number, opts: AnalyzeOptions): Promise<InputResult> {
  return new Promise((resolve, reject) => {
    const { onProgress: _progress, kafkaPorts, ...rest } = opts;
    const worker = new Worker(WORKER, { workerData: { file, input, opts: { ...rest, kafkaPorts: [...kafkaPorts] } } });
    worker.once('message', (m: { ok: true; result: InputResult } | { ok: false; captureError: boolean; message: string }) => {
      if (m.ok) resolve(m.result);
      else reject(m.captureError ? new CaptureError(m.message) : new Error(m.message));
    });
    worker.once('error', reject);
  });
}

/**
 * Analyses every input and merges the parts. One input, or jobs = 1, runs in this thread (and
 * reports progress); otherwise inputs run on up to `jobs` worker threads.
 */
export async function analyzeAll(files: readonly string[], opts: AnalyzeOptions, jobs: number): Promise<CaptureSummary> {
  const results: InputResult[] = new Array(files.length);
  if (files.length <= 1 || jobs <= 1 || files.includes('-')) {
    for (const [i, file] of files.entries()) results[i] = await analyzeInput(file, i, opts);
  } else {
    let next = 0;
    const lane = async (): Promise<void> => {
      while (next < files.length) {
        const i = next++;
        results[i] = await inWorker(files[i]!, i, opts);
      }
    };
    await Promise.all(Array.from({ length: Math.min(jobs, files.length) }, lane));
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
  }
  return summary;
}
