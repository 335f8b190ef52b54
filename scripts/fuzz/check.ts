/**
 * The properties every input must keep (issue 4), checked by running the command line in process
 * (cli/main.ts run() with an Io that writes to strings) on one capture file: `analyze --format
 * json`, `requests --format ndjson` and `requests --bodies --format ndjson` twice each, the
 * `analyze` and `requests` tables, and with `allFormats` every other report format and `clients`:
 *
 *  - every command ends with exit 0 or 1 (analyze) / 0 (requests), or 2 with exactly one stderr
 *    line "kcid: FILE: what is wrong"; never "internal error" (an exception kcid did not expect);
 *  - the commands agree: all of them fail with the same line, or none does;
 *  - JSON parses, every NDJSON line parses, and the NDJSON rows are as many as the requests the
 *    JSON summary counts (with --bodies as many as without);
 *  - JSON and NDJSON are byte-identical across two runs;
 *  - no output (table or text) holds a raw control character, C1 control or Unicode format
 *    character (bidi overrides, zero-width characters), nor a lone surrogate;
 *  - time and memory stay within the budgets: no single Buffer larger than MAX_ALLOCATION, heap
 *    growth below MAX_HEAP_GROWTH, the whole case within its time budget.
 */
import { run, type Io } from '../../src/cli/main.js';

export interface CaseFailure {
  kind: 'crash' | 'exit-code' | 'stderr' | 'json' | 'ndjson' | 'inconsistent' | 'nondeterministic' | 'unsafe-output' | 'time' | 'memory';
  message: string;
}

export interface CaseOutcome {
  failure: CaseFailure | null;
  /** Exit code of `analyze --format json`. */
  exitCode: number;
  ms: number;
  /** The parsed JSON report when there was one. */
  report: JsonReport | null;
}

export interface JsonReport {
  inputs: { packets: number; notes: string[] }[];
  summary: { requests: number; connections: number };
}

/** Largest single Buffer a case may allocate: the reader's 4 MiB read buffers are the largest legitimate ones. */
export const MAX_ALLOCATION = 8 * 1024 * 1024;
/** Heap and array-buffer growth over one case, measured when it ends. */
export const MAX_HEAP_GROWTH = 256 * 1024 * 1024;

export interface CheckOptions {
  /** Time budget of the whole case in ms. */
  budgetMs?: number;
  /**
   * Also run the other report formats (ndjson findings, sarif, junit, markdown, summary-json) and
   * `clients` (table and json). Default true; the long fuzz run does it for one case in four.
   */
  allFormats?: boolean;
}

interface Run {
  code: number;
  out: string;
  err: string;
}

async function cli(command: string[]): Promise<Run> {
  // Robustness, not emptiness, is checked: a fuzzed input with no Kafka in it is not an error here.
  const args = [...command, '--allow-empty'];
  const r: Run = { code: -1, out: '', err: '' };
  const io: Io = {
    stdout: { write: (s: string) => (r.out += s) },
    stderr: { write: (s: string) => (r.err += s) },
    env: { NO_COLOR: '1' },
  };
  try {
    r.code = await run(args, io);
  } catch (e) {
    // run() must catch everything itself.
    r.code = -1;
    r.err += `escaped run(): ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`;
  }
  return r;
}

/**
 * Terminal-unsafe: C0 controls but newline, DEL, C1 controls, and the Unicode format characters
 * sanitize.ts escapes (bidi embeddings, overrides and isolates, zero-width characters, line and
 * paragraph separators, the BOM).
 */
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/;

/** Characters XML 1.0 does not allow, even escaped (§2.2 Char). */
// eslint-disable-next-line no-control-regex
const XML_INVALID = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|&#x0*(?:[0-8bcef]|1[0-9a-f]);|&#0*(?:[0-8]|1[124-9]|2[0-9]|3[01]);/i;

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function unsafeAt(text: string): string | null {
  const m = UNSAFE.exec(text);
  if (m !== null) return `U+${m[0].charCodeAt(0).toString(16).padStart(4, '0')} at ${m.index}: ${JSON.stringify(text.slice(Math.max(0, m.index - 30), m.index + 30))}`;
  if (LONE_SURROGATE.test(text)) return 'a lone surrogate';
  return null;
}

/** The largest Buffer allocated since the case began, while the hook is installed. */
let largestAllocation = 0;
let hooked = false;

/**
 * Watches Buffer.alloc, allocUnsafe and allocUnsafeSlow for the largest size asked: a length field
 * from the input must never size an allocation. Returns the function that removes the hook.
 */
export function installAllocationHook(): () => void {
  const originals = { alloc: Buffer.alloc, allocUnsafe: Buffer.allocUnsafe, allocUnsafeSlow: Buffer.allocUnsafeSlow };
  const watch = <F extends (size: number, ...rest: never[]) => Buffer>(f: F): F =>
    function (size: number, ...rest: never[]) {
      if (size > largestAllocation) largestAllocation = size;
      return f.call(Buffer, size, ...rest);
    } as F;
  Buffer.alloc = watch(originals.alloc);
  Buffer.allocUnsafe = watch(originals.allocUnsafe);
  Buffer.allocUnsafeSlow = watch(originals.allocUnsafeSlow);
  hooked = true;
  return () => {
    Object.assign(Buffer, originals);
    hooked = false;
  };
}

const heap = (): number => {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};

/** Runs every check on the capture at `path`. */
export async function checkCapture(path: string, opts: CheckOptions = {}): Promise<CaseOutcome> {
  const budgetMs = opts.budgetMs ?? 5000;
  const heapBefore = heap();
  largestAllocation = 0;
  const started = performance.now();
  const json1 = await cli(['analyze', '--format', 'json', path]);
  const json2 = await cli(['analyze', '--format', 'json', path]);
  const nd1 = await cli(['requests', '--format', 'ndjson', path]);
  const nd2 = await cli(['requests', '--format', 'ndjson', path]);
  // Every body decoded, twice: the second run finds the first's bodies in the memo (kafka/json-memo.ts).
  const bodies1 = await cli(['requests', '--bodies', '--format', 'ndjson', path]);
  const bodies2 = await cli(['requests', '--bodies', '--format', 'ndjson', path]);
  const table = await cli(['analyze', path]);
  const rows = await cli(['requests', path]);
  const extra: [string, Run, readonly number[]][] = [];
  if (opts.allFormats ?? true) {
    for (const format of ['ndjson', 'sarif', 'junit', 'markdown', 'summary-json']) {
      extra.push([`analyze --format ${format}`, await cli(['analyze', '--format', format, path]), [0, 1, 2]]);
    }
    extra.push(['clients --format json', await cli(['clients', '--format', 'json', path]), [0, 2]]);
    extra.push(['clients', await cli(['clients', path]), [0, 2]]);
  }
  const ms = performance.now() - started;
  const growth = heap() - heapBefore;
  const outcome: CaseOutcome = { failure: null, exitCode: json1.code, ms, report: null };
  const fail = (kind: CaseFailure['kind'], message: string): CaseOutcome => ({ ...outcome, failure: { kind, message } });

  const runs: [string, Run, readonly number[]][] = [
    ['analyze --format json', json1, [0, 1, 2]],
    ['analyze --format json (again)', json2, [0, 1, 2]],
    ['requests --format ndjson', nd1, [0, 2]],
    ['requests --format ndjson (again)', nd2, [0, 2]],
    ['requests --bodies --format ndjson', bodies1, [0, 2]],
    ['requests --bodies --format ndjson (again)', bodies2, [0, 2]],
    ['analyze', table, [0, 1, 2]],
    ['requests', rows, [0, 2]],
    ...extra,
  ];
  const output = (what: string): string => extra.find(([w]) => w === what)?.[1].out ?? '';
  for (const [what, r, allowed] of runs) {
    if (r.code === -1 || r.err.includes('internal error')) return fail('crash', `${what}: ${r.err.trim()}`);
    if (!allowed.includes(r.code)) return fail('exit-code', `${what}: exit ${r.code}`);
  }
  // Exit 2 is all or nothing, with the same one line naming the file.
  const failed = runs.filter(([, r]) => r.code === 2);
  if (failed.length > 0) {
    if (failed.length !== runs.length) return fail('inconsistent', `exit 2 from ${failed.map(([w]) => w).join(', ')} only: ${failed[0]![1].err.trim()}`);
    for (const [what, r] of runs) {
      if (r.err !== json1.err) return fail('inconsistent', `${what} says ${JSON.stringify(r.err)}, analyze says ${JSON.stringify(json1.err)}`);
      if (r.out !== '') return fail('exit-code', `${what}: exit 2 after writing ${r.out.length} characters of output`);
    }
    if (!json1.err.startsWith(`kcid: ${path}: `) || !json1.err.endsWith('\n') || json1.err.indexOf('\n') !== json1.err.length - 1) {
      return fail('stderr', `exit 2 without one line naming the file: ${JSON.stringify(json1.err)}`);
    }
    const bad = unsafeAt(json1.err.slice(0, -1));
    if (bad !== null) return fail('unsafe-output', `stderr: ${bad}`);
  } else {
    for (const [what, r] of runs) if (r.err !== '') return fail('stderr', `${what}: unexpected stderr ${JSON.stringify(r.err)}`);
    let report: JsonReport;
    try {
      report = JSON.parse(json1.out) as JsonReport;
    } catch (e) {
      return fail('json', `analyze --format json is not JSON: ${(e as Error).message}`);
    }
    outcome.report = report;
    const lines = nd1.out === '' ? [] : nd1.out.slice(0, -1).split('\n');
    if (nd1.out !== '' && !nd1.out.endsWith('\n')) return fail('ndjson', 'requests --format ndjson does not end with a newline');
    let requestRows = 0;
    for (const [i, line] of lines.entries()) {
      try {
        // Responses whose request was not captured are rows too (requestCaptured false), not requests.
        if ((JSON.parse(line) as { requestCaptured?: boolean }).requestCaptured !== false) requestRows++;
      } catch (e) {
        return fail('ndjson', `ndjson line ${i + 1} is not JSON: ${(e as Error).message}`);
      }
    }
    if (requestRows !== report.summary.requests) {
      return fail('inconsistent', `requests lists ${requestRows} requests, analyze counts ${report.summary.requests}`);
    }
    // --bodies: the same rows, each a JSON object with its bodies.
    const bodyLines = bodies1.out === '' ? [] : bodies1.out.slice(0, -1).split('\n');
    if (bodies1.out !== '' && !bodies1.out.endsWith('\n')) return fail('ndjson', 'requests --bodies --format ndjson does not end with a newline');
    if (bodyLines.length !== lines.length) return fail('inconsistent', `requests --bodies lists ${bodyLines.length} rows, without --bodies ${lines.length}`);
    for (const [i, line] of bodyLines.entries()) {
      try {
        JSON.parse(line);
      } catch (e) {
        return fail('ndjson', `requests --bodies line ${i + 1} is not JSON: ${(e as Error).message}`);
      }
    }
    for (const [what, r] of runs) {
      const bad = unsafeAt(r.out.replace(/\n/g, ''));
      if (bad !== null) return fail('unsafe-output', `${what}: ${bad}`);
    }
    if (extra.length > 0) {
      for (const what of ['analyze --format sarif', 'analyze --format summary-json', 'clients --format json']) {
        try {
          JSON.parse(output(what));
        } catch (e) {
          return fail('json', `${what} is not JSON: ${(e as Error).message}`);
        }
      }
      const findings = output('analyze --format ndjson').split('\n').filter((l) => l !== '');
      for (const [i, line] of findings.entries()) {
        try {
          JSON.parse(line);
        } catch (e) {
          return fail('ndjson', `analyze --format ndjson line ${i + 1} is not JSON: ${(e as Error).message}`);
        }
      }
      const counted = (report as unknown as { findings: unknown[] }).findings.length;
      if (findings.length !== counted) return fail('inconsistent', `analyze --format ndjson has ${findings.length} findings, json ${counted}`);
      const xml = XML_INVALID.exec(output('analyze --format junit'));
      if (xml !== null) return fail('unsafe-output', `analyze --format junit holds U+${xml[0].charCodeAt(0).toString(16).padStart(4, '0')}, which XML 1.0 forbids`);
    }
  }
  if (json1.out !== json2.out) return fail('nondeterministic', 'analyze --format json differs between two runs');
  if (nd1.out !== nd2.out) return fail('nondeterministic', 'requests --format ndjson differs between two runs');
  if (bodies1.out !== bodies2.out) return fail('nondeterministic', 'requests --bodies --format ndjson differs between two runs (the second finds the bodies remembered)');
  if (hooked && largestAllocation > MAX_ALLOCATION) {
    return fail('memory', `a Buffer of ${largestAllocation} bytes was allocated (limit ${MAX_ALLOCATION})`);
  }
  if (growth > MAX_HEAP_GROWTH) return fail('memory', `heap grew by ${growth} bytes during the case (limit ${MAX_HEAP_GROWTH})`);
  if (ms > budgetMs) return fail('time', `the case took ${Math.round(ms)} ms (budget ${budgetMs} ms)`);
  return outcome;
}
