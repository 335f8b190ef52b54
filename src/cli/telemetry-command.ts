/** `kcid telemetry`: the KIP-714 conversations of the captures, their pushes decoded. */
import { captureStartUs, filterReport } from '../analysis/filters.js';
import { analyzeAll } from '../analysis/parallel.js';
import { buildReport, type SeveritySetting } from '../analysis/report.js';
import type { TimeFormat } from '../report/clock.js';
import { EXIT_CLEAN, type Io } from './io.js';
import { Out } from './output.js';
import { captureOptions, checkInputs, filterPlan, parseJobs, planTimeFormat, severities, withConfig, type CapturePlan, type CommonCliOptions, type ConfigCliOptions, type FilterPlan, type PlanContext } from './plan.js';
import { Progress } from './progress.js';
import { checkDistinctFiles, checkWindowAt, clockFor, readyCapture, styleFor, tableWidth } from './wiring.js';

export interface TelemetryCliOptions extends CommonCliOptions, ConfigCliOptions {
  format: string;
  output?: string;
}

export interface TelemetryPlan {
  captures: string[];
  capture: CapturePlan;
  jobs: number;
  format: 'table' | 'json';
  output?: string;
  severities: Map<string, SeveritySetting>;
  filters: FilterPlan;
  timeFormat: TimeFormat;
  quiet: boolean;
}

export function planTelemetry(captures: string[], options: TelemetryCliOptions, ctx: PlanContext): TelemetryPlan {
  const o = withConfig(options, ctx);
  checkInputs(captures, 'capture');
  const filters = filterPlan(o);
  const capture = { ...captureOptions(o), decodeTelemetry: true };
  const format = o.format as TelemetryPlan['format'];
  return {
    captures,
    capture,
    jobs: parseJobs(o.jobs, ctx.cores, captures.length),
    format,
    ...(o.output === undefined ? {} : { output: o.output }),
    severities: severities(ctx.config, o),
    filters,
    timeFormat: planTimeFormat(o, ctx.env, format === 'table'),
    quiet: o.quiet === true,
  };
}

export async function runTelemetry(plan: TelemetryPlan, io: Io): Promise<number> {
  const { captures } = plan;
  checkDistinctFiles(captures, 'capture');
  const progress = Progress.forStream(io.stderr, plan.quiet);
  const opts = readyCapture(plan.capture, progress, plan.filters);
  progress?.start(captures.length === 1 ? captures[0]! : `${captures.length} captures`);
  const summary = await analyzeAll(captures, opts, plan.jobs);
  progress?.done();
  const built = buildReport(summary, { severities: plan.severities });
  checkWindowAt(plan.filters, captureStartUs(built));
  const report = filterReport(built, plan.filters.filters);
  const out = new Out(io.stdout, plan.output);
  const { writeTelemetryJson, renderTelemetryTable } = await import('../report/telemetry.js');
  // JSON is written in pieces as it is made (a capture's pushes may be more than one string holds).
  if (plan.format === 'json') writeTelemetryJson(report, (s) => out.write(s));
  else out.write(renderTelemetryTable(report, await styleFor(out, io), tableWidth(out), clockFor(plan.timeFormat, captureStartUs(report), io)));
  out.close();
  return EXIT_CLEAN;
}
