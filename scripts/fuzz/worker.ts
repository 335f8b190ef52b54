/** A fuzz worker thread: writes each case to its own scratch file and checks it (see check.ts). */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parentPort } from 'node:worker_threads';
import { checkCapture, installAllocationHook } from './check.js';

export interface CaseRequest {
  index: number;
  bytes: Uint8Array;
  budgetMs: number;
  allFormats: boolean;
}

export interface CaseReply {
  index: number;
  failure: import('./check.js').CaseFailure | null;
  exitCode: number;
  ms: number;
}

const dir = mkdtempSync(join(tmpdir(), 'kcid-fuzz-'));
const path = join(dir, 'case.pcap');
installAllocationHook();

parentPort!.on('message', (req: CaseRequest | 'stop') => {
  if (req === 'stop') {
    rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  }
  writeFileSync(path, req.bytes);
  void checkCapture(path, { budgetMs: req.budgetMs, allFormats: req.allFormats }).then(
    (o) => parentPort!.postMessage({ index: req.index, failure: o.failure, exitCode: o.exitCode, ms: o.ms } satisfies CaseReply),
    (e: unknown) =>
      parentPort!.postMessage({
        index: req.index,
        failure: { kind: 'crash', message: `the checker failed: ${e instanceof Error ? e.message : String(e)}` },
        exitCode: -1,
        ms: 0,
      } satisfies CaseReply),
  );
});
