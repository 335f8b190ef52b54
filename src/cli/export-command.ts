/** `kcid export <capture...> --to DIR`: Parquet tables per capture, Hive-style (src/export/). */
import { filterReport, hasFilters, rowPredicate } from '../analysis/filters.js';
import type { Report, SeveritySetting } from '../analysis/report.js';
import { telemetryNeeds } from '../analysis/rules/index.js';
import { API_KEY } from '../kafka/protocol.js';
import type { RequestRow } from '../report/requests.js';
import { EXIT_CLEAN, type Io } from './io.js';
import { UsageError } from './options.js';
import { Out } from './output.js';
import { captureOptions, checkInputs, filterPlan, severities, withConfig, type CapturePlan, type CommonCliOptions, type ConfigCliOptions, type FilterPlan, type PlanContext } from './plan.js';
import { Progress } from './progress.js';
import { checkDistinctFiles, checkWindowAt, parquetFileOptions, readyCapture } from './wiring.js';

export interface ExportCliOptions extends CommonCliOptions, ConfigCliOptions {
  to: string;
  overwrite?: boolean;
  name?: string;
}

export interface ExportPlan {
  captures: string[];
  capture: CapturePlan;
  dir: string;
  overwrite: boolean;
  name?: string;
  severities: Map<string, SeveritySetting>;
  filters: FilterPlan;
  quiet: boolean;
  /** The config file in use, in each file's key-value metadata (kcid.config); null: none. */
  config: string | null;
}

export function planExport(captures: string[], options: ExportCliOptions, ctx: PlanContext): ExportPlan {
  const o = withConfig(options, ctx);
  checkInputs(captures, 'capture');
  if (o.jobs !== undefined) throw new UsageError('kcid export reads its captures one after another: --jobs does not apply (run several exports at once instead)');
  const filters = filterPlan(o);
  const capture = captureOptions(o);
  const settings = severities(ctx.config, o);
  capture.telemetry = telemetryNeeds(settings);
  return {
    captures,
    capture,
    dir: o.to,
    overwrite: o.overwrite === true,
    ...(o.name === undefined ? {} : { name: o.name }),
    severities: settings,
    filters,
    quiet: o.quiet === true,
    config: ctx.config.file,
  };
}

export async function runExport(plan: ExportPlan, io: Io): Promise<number> {
  checkDistinctFiles(plan.captures, 'capture');
  const progress = Progress.forStream(io.stderr, plan.quiet);
  const opts = readyCapture(plan.capture, progress, plan.filters);
  const filters = plan.filters.filters;
  const { exportCaptures } = await import('../export/export.js');
  const out = new Out(io.stdout, undefined);
  let startUs: number | null = null;
  const keep = rowPredicate(filters, () => startUs);
  await exportCaptures(plan.captures, opts, {
    dir: plan.dir,
    overwrite: plan.overwrite,
    ...(plan.name === undefined ? {} : { name: plan.name }),
    severities: plan.severities,
    ...(hasFilters(filters)
      ? {
          keepRow: (row: RequestRow, s, us) => keep(row, s.clientIds, us),
          keepPush: (p) => keep({ clientInstanceId: p.instanceId, client: p.client, broker: p.broker, apiKey: API_KEY.PushTelemetry }, p.clientId === null ? [] : [p.clientId], p.timeUs),
          filterReport: (r: Report) => filterReport(r, filters),
        }
      : {}),
    file: parquetFileOptions(plan.config),
    onStart: (file) => {
      startUs = null;
      progress?.start(file);
    },
    onCaptureStart: (us) => {
      startUs = us;
      checkWindowAt(plan.filters, us);
    },
    onCapture: (file, n) => {
      progress?.done();
      const telemetry = n.telemetry === 0 ? '' : `, ${n.telemetry} telemetry pushes`;
      out.write(`${file}: capture=${n.capture}: ${n.requests} requests, ${n.connections} connections, ${n.instances} instances, ${n.findings} findings${telemetry}\n`);
    },
  });
  out.close();
  return EXIT_CLEAN;
}
