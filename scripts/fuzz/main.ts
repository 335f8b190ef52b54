/**
 * `npm run fuzz -- [--iterations N] [--seed S] [--from I] [--jobs J] [--budget-ms MS] [--no-save]`
 * `npm run fuzz -- flood [--connections N] [--mode M]` (see flood-main.ts)
 * `npm run fuzz -- decoders [--target NAME] [--iterations N] ...` (see decoders-main.ts)
 *
 * Mutates the seed corpus (seeds.ts) into N cases and checks each in a pool of worker threads
 * (check.ts). A case that takes longer than the hard timeout is a hang: its worker is
 * terminated. A worker that runs out of its heap limit is a memory failure. Every failing case
 * is saved to test/regressions/ (at most a few per distinct failure) and the run exits 1.
 */
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { CaseFailure } from './check.js';
import { makeCase, saveRegression, signature, type FuzzCase } from './engine.js';
import { flood } from './flood-main.js';
import { decoders } from './decoders-main.js';
import { loadSeeds } from './seeds.js';
import type { CaseReply, CaseRequest } from './worker.js';

interface Options {
  iterations: number;
  seed: number;
  from: number;
  jobs: number;
  budgetMs: number;
  hardTimeoutMs: number;
  heapMb: number;
  save: boolean;
  root: string;
}

const USAGE = 'usage: npm run fuzz -- [--iterations N] [--seed S] [--from INDEX] [--jobs J] [--budget-ms MS] [--heap-mb MB] [--no-save]';

function parseArgs(argv: string[]): Options {
  const o: Options = {
    iterations: 1000,
    seed: 1,
    from: 0,
    jobs: Math.max(1, availableParallelism()),
    budgetMs: 5000,
    hardTimeoutMs: 60_000,
    heapMb: 512,
    save: true,
    root: process.cwd(),
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const num = (): number => {
      const v = Number(argv[++i]);
      if (!Number.isInteger(v) || v < 0) throw new Error(`${a} needs a non-negative integer\n${USAGE}`);
      return v;
    };
    if (a === '--iterations') o.iterations = num();
    else if (a === '--seed') o.seed = num();
    else if (a === '--from') o.from = num();
    else if (a === '--jobs') o.jobs = Math.max(1, num());
    else if (a === '--budget-ms') o.budgetMs = num();
    else if (a === '--heap-mb') o.heapMb = num();
    else if (a === '--no-save') o.save = false;
    else if (a === '--root') o.root = resolve(argv[++i] ?? '.');
    else throw new Error(`unknown option ${a}\n${USAGE}`);
  }
  return o;
}

interface Slot {
  worker: Worker;
  current: FuzzCase | null;
  timer: NodeJS.Timeout | null;
}

async function main(): Promise<number> {
  if (process.argv[2] === 'flood') return flood(process.argv.slice(3));
  if (process.argv[2] === 'decoders') return decoders(process.argv.slice(3));
  const o = parseArgs(process.argv.slice(2));
  const seeds = loadSeeds(join(o.root, 'fixtures'));
  const regressions = join(o.root, 'test', 'regressions');
  const workerUrl = new URL('./worker.js', import.meta.url);
  const started = Date.now();
  const end = o.from + o.iterations;
  let next = o.from;
  let done = 0;
  const failures: { c: FuzzCase; failure: CaseFailure }[] = [];
  const bySignature = new Map<string, number>();
  const exitCodes = new Map<number, number>();
  let slowest = 0;
  let lastReport = Date.now();

  process.stderr.write(`fuzz: seed ${o.seed}, cases ${o.from}..${end - 1}, ${seeds.length} seeds, ${o.jobs} workers\n`);

  return new Promise<number>((finish) => {
    const slots: Slot[] = [];
    let live = 0;

    const record = (c: FuzzCase, failure: CaseFailure | null, exitCode: number, ms: number): void => {
      done++;
      exitCodes.set(exitCode, (exitCodes.get(exitCode) ?? 0) + 1);
      slowest = Math.max(slowest, ms);
      if (failure !== null) {
        const sig = signature(failure);
        const seen = bySignature.get(sig) ?? 0;
        bySignature.set(sig, seen + 1);
        failures.push({ c, failure });
        let saved = '';
        if (o.save && seen < 3) saved = ` -> test/regressions/${saveRegression(regressions, c, failure)}.bin`;
        process.stderr.write(`FAIL case ${c.index} (${c.base}; ${c.steps.join('; ')}): ${failure.kind}: ${failure.message}${saved}\n`);
      }
      if (Date.now() - lastReport > 10_000) {
        lastReport = Date.now();
        const rate = done / ((Date.now() - started) / 1000);
        process.stderr.write(`fuzz: ${done}/${o.iterations} cases, ${failures.length} failures, ${rate.toFixed(0)} cases/s\n`);
      }
    };

    const feed = (slot: Slot): void => {
      if (next >= end) {
        slot.current = null;
        void slot.worker.postMessage('stop');
        return;
      }
      const c = makeCase(seeds, o.seed, next++);
      slot.current = c;
      // Every report format and `clients` too for one case in four: they double a case's time.
      const req: CaseRequest = { index: c.index, bytes: c.bytes, budgetMs: o.budgetMs, allFormats: c.index % 4 === 0 };
      slot.worker.postMessage(req);
      slot.timer = setTimeout(() => {
        // A hang: the worker is stuck in the case. Terminate it and carry on with a fresh one.
        const hung = slot.current!;
        slot.current = null;
        record(hung, { kind: 'time', message: `no answer within ${o.hardTimeoutMs} ms: a hang` }, -1, o.hardTimeoutMs);
        void slot.worker.terminate();
      }, o.hardTimeoutMs);
    };

    const spawn = (slot: Slot): void => {
      const worker = new Worker(workerUrl, { resourceLimits: { maxOldGenerationSizeMb: o.heapMb } });
      slot.worker = worker;
      live++;
      worker.on('message', (reply: CaseReply) => {
        if (slot.timer !== null) clearTimeout(slot.timer);
        slot.timer = null;
        const c = slot.current;
        if (c === null || c.index !== reply.index) return;
        record(c, reply.failure, reply.exitCode, reply.ms);
        feed(slot);
      });
      worker.on('error', (e: Error & { code?: string }) => {
        const c = slot.current;
        slot.current = null;
        if (c !== null) {
          if (slot.timer !== null) clearTimeout(slot.timer);
          const kind = e.code === 'ERR_WORKER_OUT_OF_MEMORY' ? 'memory' : 'crash';
          record(c, { kind, message: `the worker died: ${e.code ?? ''} ${e.message}` }, -1, 0);
        }
      });
      worker.on('exit', () => {
        live--;
        if (next < end) {
          spawn(slot);
          feed(slot);
        } else if (live === 0) {
          summarize();
        }
      });
    };

    const summarize = (): void => {
      const secs = (Date.now() - started) / 1000;
      const codes = [...exitCodes].sort((a, b) => a[0] - b[0]).map(([k, n]) => `exit ${k}: ${n}`).join(', ');
      process.stdout.write(
        `fuzz: ${done} cases (seed ${o.seed}, from ${o.from}) in ${secs.toFixed(1)} s, ${(done / secs).toFixed(0)} cases/s; ` +
          `${codes}; slowest case ${Math.round(slowest)} ms; ${failures.length} failures` +
          (bySignature.size > 0 ? `:\n${[...bySignature].map(([s, n]) => `  ${n} x ${s}`).join('\n')}` : '') +
          '\n',
      );
      finish(failures.length > 0 ? 1 : 0);
    };

    for (let j = 0; j < Math.min(o.jobs, o.iterations); j++) {
      const slot: Slot = { worker: null as unknown as Worker, current: null, timer: null };
      slots.push(slot);
      spawn(slot);
      feed(slot);
    }
    if (slots.length === 0) summarize();
  });
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`fuzz: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 2;
  },
);
