/**
 * The thread that runs one decoder target's cases (decoders.ts) for decoders-main.ts: it posts
 * each failure, writes the case it is on into shared memory (the watchdog reads it), and measures
 * each case's CPU time (process.cpuUsage: this thread is the only busy one).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { prepare, targets } from './decoders.js';

export interface DecoderJob {
  target: string;
  seed: number;
  from: number;
  to: number;
  budgetMs: number;
  /** [current case index, cases done] */
  progress: SharedArrayBuffer;
}

export type DecoderReply = { kind: 'failure'; index: number; message: string } | { kind: 'done'; slowestMs: number };

const job = workerData as DecoderJob;
const progress = new Int32Array(job.progress);
await prepare();
const target = targets().find((t) => t.name === job.target);
if (target === undefined) throw new Error(`no target ${job.target}`);
let slowestMs = 0;
for (let i = job.from; i < job.to; i++) {
  Atomics.store(progress, 0, i);
  const t0 = process.cpuUsage();
  let failure: string | null;
  try {
    failure = target.run(job.seed, i);
  } catch (e) {
    failure = `the target threw: ${(e as Error).stack ?? String(e)}`;
  }
  const used = process.cpuUsage(t0);
  const ms = (used.user + used.system) / 1000;
  slowestMs = Math.max(slowestMs, ms);
  if (failure === null && ms > job.budgetMs) failure = `took ${ms.toFixed(0)} ms of CPU (budget ${job.budgetMs} ms)`;
  if (failure !== null) parentPort!.postMessage({ kind: 'failure', index: i, message: failure } satisfies DecoderReply);
  Atomics.store(progress, 1, i - job.from + 1);
}
parentPort!.postMessage({ kind: 'done', slowestMs } satisfies DecoderReply);
