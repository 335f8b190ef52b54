/**
 * From a merged summary (of captures, or of summary files) to the report written and the exit
 * code: shared by `kcid analyze` and `kcid merge`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { applyBaseline, parseBaseline, writeBaseline } from '../analysis/baseline.js';
import { captureStartUs, filterReport } from '../analysis/filters.js';
import { buildReport, reachesThreshold, type Report, type SeveritySetting } from '../analysis/report.js';
import { writeSummaryJson } from '../analysis/summary-io.js';
import type { CaptureSummary } from '../analysis/types.js';
import type { TimeFormat } from '../report/clock.js';
import { writeReportJson } from '../report/json.js';
import { EXIT_CLEAN, EXIT_FINDINGS, packageVersion, type Io } from './io.js';
import { parseFailOn, UsageError, type FailOn } from './options.js';
import { Out, writeProblem } from './output.js';
import { filterPlan, planTimeFormat, severities, type CommonCliOptions, type ConfigCliOptions, type FilterPlan, type PlanContext } from './plan.js';
import { checkNotEmpty, checkWindowAt, clockFor, parquetFileOptions, styleFor, tableWidth } from './wiring.js';

export const ANALYZE_FORMATS = ['table', 'json', 'ndjson', 'junit', 'sarif', 'markdown', 'html', 'summary-json', 'parquet'] as const;
export type ReportFormat = (typeof ANALYZE_FORMATS)[number];

/** How a report is judged and written (analyze and merge alike). */
export interface ReportPlan {
  format: ReportFormat;
  failOn: FailOn;
  severities: Map<string, SeveritySetting>;
  /** --telemetry: JSON's telemetry member. */
  telemetry: boolean;
  /** -o FILE (required by parquet). */
  output?: string;
  baseline?: string;
  writeBaseline?: string;
  filters: FilterPlan;
  timeFormat: TimeFormat;
  /** The config file in use, named in every format (null: none was read). */
  config: string | null;
}

/** From merged summary to the report shown: severities, baseline, filters. */
export function reportFrom(summary: CaptureSummary, p: ReportPlan): Report {
  let report = buildReport(summary, { severities: p.severities });
  checkWindowAt(p.filters, captureStartUs(report));
  if (p.writeBaseline !== undefined) {
    try {
      writeFileSync(p.writeBaseline, writeBaseline(report));
    } catch (e) {
      throw new UsageError(`cannot write --write-baseline ${p.writeBaseline}: ${writeProblem(e)}`);
    }
  }
  if (p.baseline !== undefined) {
    let text: string;
    try {
      text = readFileSync(p.baseline, 'utf8');
    } catch (e) {
      throw new UsageError(`cannot read --baseline ${p.baseline}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`);
    }
    report = applyBaseline(report, parseBaseline(text, p.baseline)).report;
  }
  const shown = filterReport(report, p.filters.filters);
  return p.config === null ? shown : { ...shown, config: p.config };
}

/** Writes the report in the chosen format; the JSON formats are written in pieces as they are made. */
async function emit(judged: Report, summary: CaptureSummary, p: ReportPlan, out: Out, io: Io): Promise<void> {
  const write = (s: string) => out.write(s);
  // The telemetry rules always judge the conversations; --telemetry also shows them (JSON's telemetry member).
  const report = p.telemetry ? judged : { ...judged, telemetry: [] };
  if (p.format === 'json') writeReportJson(report, write);
  else if (p.format === 'summary-json') writeSummaryJson(summary, write);
  else if (p.format === 'sarif') (await import('../report/sarif.js')).writeSarif(report, write, packageVersion(), undefined, p.severities);
  else if (p.format === 'ndjson') (await import('../report/ndjson.js')).writeFindingsNdjson(report, write);
  else out.write(await render(report, p, out, io));
}

async function render(report: Report, p: ReportPlan, out: Out, io: Io): Promise<string> {
  switch (p.format) {
    case 'ndjson':
      return (await import('../report/ndjson.js')).renderFindingsNdjson(report);
    case 'junit':
      return (await import('../report/junit.js')).renderJunit(report, { failOn: p.failOn });
    case 'sarif':
      return (await import('../report/sarif.js')).renderSarif(report, packageVersion(), undefined, p.severities);
    case 'markdown':
      return (await import('../report/markdown.js')).renderMarkdown(report, { failOn: p.failOn });
    case 'html':
      return (await import('../report/html/page.js')).renderHtml(report, { version: packageVersion() });
    default:
      return (await import('../report/table.js')).renderTable(report, await styleFor(out, io), tableWidth(out), clockFor(p.timeFormat, captureStartUs(report), io), out.isTTY);
  }
}

/** The report written in its format, and the exit code: 1 when a finding reaches --fail-on. */
export async function writeReport(summary: CaptureSummary, p: ReportPlan, io: Io): Promise<number> {
  const out = p.format === 'parquet' ? null : new Out(io.stdout, p.output);
  const report = reportFrom(summary, p);
  checkNotEmpty(report.connections.length > 0, p.filters);
  const code = reachesThreshold(report, p.failOn) ? EXIT_FINDINGS : EXIT_CLEAN;
  // The whole report is judged before a byte is written: a reader that stops early does not change the exit code.
  io.gate?.raise(code);
  if (out === null) (await import('../export/single.js')).writeFindingsParquet(report, p.output!, parquetFileOptions(p.config));
  else {
    await emit(report, summary, p, out, io);
    out.close();
  }
  return code;
}

/** The options analyze and merge share for their report. */
export interface ReportCliOptions extends ConfigCliOptions {
  format: string;
  failOn: string;
  baseline?: string;
  writeBaseline?: string;
  output?: string;
  telemetry?: boolean;
  timeFormat?: string;
}

/** The report half of analyze's and merge's plans (`o` has the config file's settings applied). */
export function planReport(o: ReportCliOptions & Partial<CommonCliOptions>, ctx: PlanContext): ReportPlan {
  const format = o.format as ReportFormat;
  const plan: ReportPlan = {
    format,
    failOn: parseFailOn(o.failOn),
    severities: severities(ctx.config, o),
    telemetry: o.telemetry === true,
    filters: filterPlan(o),
    timeFormat: planTimeFormat(o, ctx.env, format === 'table'),
    config: ctx.config.file,
  };
  if (format === 'parquet' && o.output === undefined) throw new UsageError('--format parquet writes a file: give it with -o FILE');
  if (o.output !== undefined) plan.output = o.output;
  if (o.baseline !== undefined) plan.baseline = o.baseline;
  if (o.writeBaseline !== undefined) plan.writeBaseline = o.writeBaseline;
  return plan;
}
