/**
 * `npm run fuzz -- decoders [--target NAME] [--iterations N] [--seed S] [--from I] [--budget-ms MS] [--heap-mb MB]`
 *
 * Runs the structure-aware decoder targets (decoders.ts), one at a time, each in a worker thread
 * whose heap is limited to --heap-mb (default 256): a case that runs it out is a memory failure. A
 * case over --budget-ms of CPU (default 2000) is a failure; one still running after ten times that
 * (wall clock) is a hang, and its worker is ended. The run continues after the failing case and
 * exits 1 if any case failed. A failure is reproduced with --seed S --from INDEX --iterations 1.
 */
import { Worker } from 'node:worker_threads';
import { targets } from './decoders.js';
import type { DecoderJob, DecoderReply } from './decoders-worker.js';

const USAGE = 'usage: npm run fuzz -- decoders [--target zstd|lz4|snappy|gzip|otlp|schemas|keylog] [--iterations N] [--seed S] [--from INDEX] [--budget-ms MS] [--heap-mb MB]';

export async function decoders(argv: string[]): Promise<number> {
  const o = { target: null as string | null, iterations: 1000, seed: 1, from: 0, budgetMs: 2000, heapMb: 256 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const num = (): number => {
      const v = Number(argv[++i]);
      if (!Number.isInteger(v) || v < 0) throw new Error(`${a} needs a non-negative integer\n${USAGE}`);
      return v;
    };
    if (a === '--target') o.target = argv[++i] ?? '';
    else if (a === '--iterations') o.iterations = num();
    else if (a === '--seed') o.seed = num();
    else if (a === '--from') o.from = num();
    else if (a === '--budget-ms') o.budgetMs = num();
    else if (a === '--heap-mb') o.heapMb = num();
    else throw new Error(`unknown option ${a}\n${USAGE}`);
  }
  const names = targets().map((t) => t.name);
  if (o.target !== null && !names.includes(o.target)) throw new Error(`no target ${o.target}\n${USAGE}`);
  let failed = 0;
  for (const name of o.target === null ? names : [o.target]) failed += await runTarget(name, o);
  return failed === 0 ? 0 : 1;
}

async function runTarget(name: string, o: { iterations: number; seed: number; from: number; budgetMs: number; heapMb: number }): Promise<number> {
  const started = Date.now();
  const end = o.from + o.iterations;
  let from = o.from;
  let failures = 0;
  let slowest = 0;
  process.stderr.write(`fuzz decoders: ${name}, seed ${o.seed}, cases ${o.from}..${end - 1}, budget ${o.budgetMs} ms CPU and ${o.heapMb} MB heap a case\n`);
  while (from < end) {
    const progress = new SharedArrayBuffer(8);
    const view = new Int32Array(progress);
    Atomics.store(view, 0, from);
    const job: DecoderJob = { target: name, seed: o.seed, from, to: end, budgetMs: o.budgetMs, progress };
    const worker = new Worker(new URL('./decoders-worker.js', import.meta.url), { workerData: job, resourceLimits: { maxOldGenerationSizeMb: o.heapMb, maxYoungGenerationSizeMb: 32 } });
    // The case a stopped worker was on is the failure; the run goes on after it.
    const stopped = await new Promise<{ index: number; why: string } | null>((resolve) => {
      let seen = -1;
      let since = Date.now();
      let lastReport = Date.now();
      const watch = setInterval(() => {
        const now = Atomics.load(view, 0);
        if (now !== seen) {
          seen = now;
          since = Date.now();
        } else if (Date.now() - since > 10 * o.budgetMs) {
          clearInterval(watch);
          void worker.terminate();
          resolve({ index: now, why: `hang: still running after ${10 * o.budgetMs} ms` });
        }
        if (Date.now() - lastReport > 30_000) {
          lastReport = Date.now();
          process.stderr.write(`fuzz decoders: ${name}: case ${now}, ${failures} failures, ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
        }
      }, 200);
      worker.on('message', (m: DecoderReply) => {
        if (m.kind === 'failure') {
          failures++;
          process.stderr.write(`FAIL ${name} case ${m.index}: ${m.message} [reproduce: npm run fuzz -- decoders --target ${name} --seed ${o.seed} --from ${m.index} --iterations 1]\n`);
        } else {
          slowest = Math.max(slowest, m.slowestMs);
          clearInterval(watch);
          resolve(null);
        }
      });
      worker.on('error', (e: Error & { code?: string }) => {
        clearInterval(watch);
        resolve({ index: Atomics.load(view, 0), why: e.code === 'ERR_WORKER_OUT_OF_MEMORY' ? `memory: over ${o.heapMb} MB of heap` : `crash: ${e.message}` });
      });
      worker.on('exit', () => {
        clearInterval(watch);
        resolve(null);
      });
    });
    if (stopped === null) break;
    failures++;
    process.stderr.write(`FAIL ${name} case ${stopped.index}: ${stopped.why} [reproduce: npm run fuzz -- decoders --target ${name} --seed ${o.seed} --from ${stopped.index} --iterations 1]\n`);
    from = stopped.index + 1;
  }
  const secs = (Date.now() - started) / 1000;
  process.stderr.write(`fuzz decoders: ${name}: ${o.iterations} cases, ${failures} failures, ${secs.toFixed(1)} s, slowest case ${slowest.toFixed(0)} ms CPU\n`);
  return failures;
}
