/** `kcid analyze`: the captures analysed and judged, the report written, the gate's exit code. */
import { analyzeAll } from '../analysis/parallel.js';
import { telemetryNeeds } from '../analysis/rules/index.js';
import type { Io } from './io.js';
import { UsageError } from './options.js';
import { captureOptions, checkInputs, parseJobs, planTimeFormat, withConfig, type CapturePlan, type CommonCliOptions, type PlanContext } from './plan.js';
import { Progress } from './progress.js';
import { planReport, writeReport, type ReportCliOptions, type ReportPlan } from './report-writer.js';
import { runFollow } from './follow.js';
import { startInputs, readyCapture } from './wiring.js';

export interface AnalyzeCliOptions extends CommonCliOptions, ReportCliOptions {
  follow?: boolean;
}

export interface AnalyzePlan {
  captures: string[];
  capture: CapturePlan;
  /** Captures analysed at once (1 with --follow). */
  jobs: number;
  report: ReportPlan;
  /** --follow: findings printed as found (table or ndjson), one input. */
  follow: boolean;
  quiet: boolean;
}

export function planAnalyze(captures: string[], options: AnalyzeCliOptions, ctx: PlanContext): AnalyzePlan {
  const o = withConfig(options, ctx);
  checkInputs(captures, 'capture');
  const follow = o.follow === true;
  if (follow) {
    if (captures.length !== 1) throw new UsageError('--follow reads one input (use - for stdin)');
    if (o.format !== 'table' && o.format !== 'ndjson') throw new UsageError(`--follow writes table or ndjson, not ${o.format}`);
  }
  const capture = captureOptions(o);
  const report = planReport(o, ctx);
  // The telemetry rules read the pushes' metrics unless configured off; --telemetry shows them all.
  if (capture.decodeTelemetry !== true) capture.telemetry = telemetryNeeds(report.severities);
  // The page draws traffic over time, and a summary keeps it for `kcid merge --format html`.
  if (o.format === 'html' || o.format === 'summary-json') capture.activity = true;
  // Follow mode prints times in every format.
  if (follow) report.timeFormat = planTimeFormat(o, ctx.env, true);
  return { captures, capture, jobs: follow ? 1 : parseJobs(o.jobs, ctx.cores, captures.length), report, follow, quiet: o.quiet === true };
}

export async function runAnalyze(plan: AnalyzePlan, io: Io): Promise<number> {
  const { captures } = plan;
  startInputs(captures, io);
  if (plan.follow) return runFollow(plan.captures[0]!, plan.capture, plan.report, io);
  const progress = Progress.forStream(io.stderr, plan.quiet);
  const opts = readyCapture(plan.capture, progress, plan.report.filters);
  progress?.start(captures.length === 1 ? captures[0]! : `${captures.length} captures`);
  const summary = await analyzeAll(captures, opts, plan.jobs);
  progress?.writing();
  try {
    return await writeReport(summary, plan.report, io);
  } finally {
    progress?.done();
  }
}
