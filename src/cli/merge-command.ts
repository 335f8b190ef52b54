/** `kcid merge`: summary files (`kcid analyze --format summary-json`) combined into one report. */
import { mergeSummaries, SummaryError } from '../analysis/summary-io.js';
import { readSummaryFile } from '../analysis/summary-stream.js';
import { pcapMagic } from '../capture/pcap.js';
import type { Io } from './io.js';
import { checkInputs, withConfig, type CommonCliOptions, type PlanContext } from './plan.js';
import { checkDistinctFiles } from './wiring.js';
import { planReport, writeReport, type ReportCliOptions, type ReportPlan } from './report-writer.js';

export type MergeCliOptions = ReportCliOptions & Partial<CommonCliOptions>;

export interface MergePlan {
  files: string[];
  report: ReportPlan;
}

export function planMerge(files: string[], options: MergeCliOptions, ctx: PlanContext): MergePlan {
  const o = withConfig(options, ctx);
  checkInputs(files, 'summary');
  return { files, report: planReport(o, ctx) };
}

export async function runMerge(plan: MergePlan, io: Io): Promise<number> {
  checkDistinctFiles(plan.files, 'summary');
  // Each file read as a stream (a summary can be longer than a string can be).
  const parts = plan.files.map((file) =>
    readSummaryFile(file, (bytes) => {
      const capture = captureKind(bytes);
      if (capture !== null) {
        throw new SummaryError(`${file}: is a ${capture} capture, not a summary (analyse it with 'kcid analyze', or make a summary with 'kcid analyze ${file} --format summary-json')`);
      }
    }),
  );
  return writeReport(mergeSummaries(parts), plan.report, io);
}

/** "pcap", "pcapng" or "gzip" when the bytes start like one (summaries are JSON), else null. */
function captureKind(bytes: Buffer): string | null {
  if (bytes.length < 4) return null;
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) return 'gzip';
  if (bytes.readUInt32BE(0) === 0x0a0d0d0a) return 'pcapng';
  return pcapMagic(bytes) === null ? null : 'pcap';
}
