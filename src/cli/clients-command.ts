/** `kcid clients`: one row per client instance, or one instance in detail (--instance). */
import { captureStartUs, filterReport, resolveInstance, type Filters } from '../analysis/filters.js';
import { analyzeAll, mergeResults } from '../analysis/parallel.js';
import { buildReport, type SeveritySetting } from '../analysis/report.js';
import { telemetryNeeds } from '../analysis/rules/index.js';
import { analyzeInput } from '../analysis/run.js';
import { safeJson } from '../base/json-text.js';
import type { TimeFormat } from '../report/clock.js';
import { RequestRows, requestJson, type RequestRow } from '../report/requests.js';
import { EXIT_CLEAN, type Io } from './io.js';
import { Out } from './output.js';
import {
  captureOptions,
  checkInputs,
  filterPlan,
  parseJobs,
  planTimeFormat,
  severities,
  withConfig,
  type CapturePlan,
  type CommonCliOptions,
  type ConfigCliOptions,
  type FilterPlan,
  type PlanContext,
} from './plan.js';
import { Progress } from './progress.js';
import { startInputs, checkNotEmpty, checkWindowAt, clockFor, readyCapture, styleFor, tableWidth } from './wiring.js';

export interface ClientsCliOptions extends CommonCliOptions, ConfigCliOptions {
  format: string;
  output?: string;
}

export interface ClientsPlan {
  captures: string[];
  capture: CapturePlan;
  jobs: number;
  format: 'table' | 'json';
  output?: string;
  severities: Map<string, SeveritySetting>;
  /** --instance: the one instance shown in detail (null: the table of all). */
  instance: string | null;
  /** The other filters. */
  filters: FilterPlan & { filters: Omit<Filters, 'instance'> };
  timeFormat: TimeFormat;
  quiet: boolean;
}

export function planClients(captures: string[], options: ClientsCliOptions, ctx: PlanContext): ClientsPlan {
  const o = withConfig(options, ctx);
  checkInputs(captures, 'capture');
  const capture = captureOptions(o);
  const fp = filterPlan(o);
  const { instance, ...others } = fp.filters;
  const format = o.format as ClientsPlan['format'];
  const settings = severities(ctx.config, o);
  if (instance === undefined) capture.telemetry = telemetryNeeds(settings);
  // One instance in detail: its telemetry conversation (pushes decoded) is summarised.
  else capture.decodeTelemetry = true;
  return {
    captures,
    capture,
    jobs: parseJobs(o.jobs, ctx.cores, captures.length),
    format,
    ...(o.output === undefined ? {} : { output: o.output }),
    severities: settings,
    instance: instance ?? null,
    filters: { ...fp, filters: others },
    timeFormat: planTimeFormat(o, ctx.env, instance !== undefined && format === 'table'),
    quiet: o.quiet === true,
  };
}

/** Rows kept for `clients --instance`, at most this many. */
const MAX_TIMELINE_ROWS = 10_000;

export async function runClients(plan: ClientsPlan, io: Io): Promise<number> {
  const { captures } = plan;
  startInputs(captures, io);
  const progress = Progress.forStream(io.stderr, plan.quiet);
  const opts = readyCapture(plan.capture, progress, plan.filters);
  const others = plan.filters.filters;
  const out = new Out(io.stdout, plan.output);
  const style = await styleFor(out, io);
  const { renderClientDetail, renderClientsJson, renderClientsTable } = await import('../report/clients.js');
  if (plan.instance === null) {
    progress?.start(captures.length === 1 ? captures[0]! : `${captures.length} captures`);
    const summary = await analyzeAll(captures, opts, plan.jobs);
    progress?.done();
    const built = buildReport(summary, { severities: plan.severities });
    checkWindowAt(plan.filters, captureStartUs(built));
    const report = filterReport(built, others);
    checkNotEmpty(report.connections.length > 0, plan.filters);
    out.write(plan.format === 'json' ? renderClientsJson(report) : renderClientsTable(report, style, tableWidth(out)));
    out.close();
    return EXIT_CLEAN;
  }
  // One instance in detail: keep request rows (bounded) to draw its timeline once it is known.
  const rows: RequestRow[] = [];
  let truncated = false;
  const results = [];
  for (const [i, file] of captures.entries()) {
    const observer = new RequestRows(i, (row) => {
      if (rows.length < MAX_TIMELINE_ROWS) rows.push(row);
      else truncated = true;
    });
    progress?.start(file);
    results.push(await analyzeInput(file, i, opts, () => {}, observer));
    observer.finish();
    progress?.done();
  }
  const built = buildReport(mergeResults(results), { severities: plan.severities });
  checkWindowAt(plan.filters, captureStartUs(built));
  const report = filterReport(built, others);
  const ids = report.instances.flatMap((x) => (x.clientInstanceId === null ? [] : [x.clientInstanceId]));
  const id = resolveInstance(plan.instance, ids);
  const inst = report.instances.find((x) => x.clientInstanceId === id)!;
  const conns = new Set(inst.connections.map((c) => `${c.input}\u0000${c.client}\u0000${c.broker}`));
  const mine = rows.filter((r) => conns.has(`${r.input}\u0000${r.client}\u0000${r.broker}`));
  const telemetry = report.telemetry.filter((c) => c.instanceId === id);
  const { renderTelemetrySummary, telemetryJson } = await import('../report/telemetry.js');
  if (plan.format === 'json') {
    out.write(`${safeJson({ instance: JSON.parse(renderClientsJson({ ...report, instances: [inst] }))[0], requests: mine.map(requestJson), telemetry: telemetryJson(telemetry) }, 2)}\n`);
  } else {
    const width = out.isTTY ? tableWidth(out) : Infinity;
    out.write(renderClientDetail(report, inst, mine, truncated, style, clockFor(plan.timeFormat, captureStartUs(report), io), width));
    out.write(renderTelemetrySummary(telemetry, style, width));
  }
  out.close();
  return EXIT_CLEAN;
}
