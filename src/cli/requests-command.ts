/** `kcid requests`: every Kafka request with the response that answers it, as rows into a {@link RowSink}. */
import { rowPredicate } from '../analysis/filters.js';
import { analyzeInput, type AnalyzeOptions } from '../analysis/run.js';
import type { TimeFormat } from '../report/clock.js';
import { RequestRows } from '../report/requests.js';
import { DEFAULT_MAX_TELEMETRY_BYTES } from '../telemetry/names.js';
import { EXIT_CLEAN, type Io } from './io.js';
import { parseSize, UsageError } from './options.js';
import { Out } from './output.js';
import { captureOptions, checkInputs, filterPlan, planTimeFormat, type CapturePlan, type CommonCliOptions, type FilterPlan, type PlanContext } from './plan.js';
import { Progress } from './progress.js';
import { ndjsonSink, parquetSink, tableSink, type RowSink } from './row-sink.js';
import { startInputs, checkNotEmpty, checkWindowAt, clockFor, readyCapture } from './wiring.js';

export interface RequestsCliOptions extends CommonCliOptions {
  format: string;
  follow?: boolean;
  output?: string;
  bodies?: boolean;
  maxBodyBytes?: string;
}

/** --max-body-bytes by default: a few MiB holds any body but Produce and Fetch payload, which is sized, never decoded. */
export const DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024;

export interface RequestsPlan {
  captures: string[];
  capture: CapturePlan;
  format: 'table' | 'ndjson' | 'parquet';
  /** -o FILE (required by parquet). */
  output?: string;
  follow: boolean;
  /** --bodies: how each row carries its bodies (false: it does not). */
  bodies: 'summary' | 'json' | false;
  /** --bodies: PushTelemetry rows carry their metrics, up to this many bytes decompressed (null: no --bodies). */
  telemetryBytes: number | null;
  filters: FilterPlan;
  timeFormat: TimeFormat;
  quiet: boolean;
}

export function planRequests(captures: string[], o: RequestsCliOptions, ctx: PlanContext): RequestsPlan {
  const follow = o.follow === true;
  const format = o.format as RequestsPlan['format'];
  checkInputs(captures, 'capture');
  if (follow && captures.length !== 1) throw new UsageError('--follow reads one input (use - for stdin)');
  const filters = filterPlan(o);
  // Rows show no findings: no rule is run and no telemetry conversation is collected (--bodies decodes each push for its row).
  const capture: CapturePlan = { ...captureOptions(o), telemetry: 'off', judge: false };
  if (o.maxBodyBytes !== undefined && o.bodies !== true) throw new UsageError('--max-body-bytes goes with --bodies');
  if (o.bodies === true) {
    capture.maxBodyBytes = o.maxBodyBytes === undefined ? DEFAULT_MAX_BODY_BYTES : parseSize(o.maxBodyBytes, '--max-body-bytes');
    // NDJSON shows the bodies as JSON, which the Kafka stage writes from the wire; the table summarises decoded values.
    if (format === 'ndjson') capture.bodyForm = 'json';
  }
  if (format === 'parquet') {
    if (o.output === undefined) throw new UsageError('--format parquet writes a file: give it with -o FILE');
    if (follow) throw new UsageError('--follow writes table or ndjson, not parquet');
  }
  return {
    captures,
    capture,
    format,
    ...(o.output === undefined ? {} : { output: o.output }),
    follow,
    bodies: o.bodies !== true || format === 'parquet' ? false : format === 'table' ? 'summary' : 'json',
    telemetryBytes: o.bodies === true ? (capture.maxTelemetryBytes ?? DEFAULT_MAX_TELEMETRY_BYTES) : null,
    filters,
    timeFormat: planTimeFormat(o, ctx.env, true),
    quiet: o.quiet === true,
  };
}

export async function runRequests(plan: RequestsPlan, io: Io): Promise<number> {
  const { captures, follow } = plan;
  startInputs(captures, io);
  const progress = follow ? null : Progress.forStream(io.stderr, plan.quiet);
  const controller = new AbortController();
  const stopListening = follow ? (io.onInterrupt?.(() => controller.abort()) ?? (() => {})) : () => {};
  const opts: AnalyzeOptions = { ...readyCapture(plan.capture, progress, plan.filters), ...(follow ? { signal: controller.signal } : {}) };
  // --bodies opens PushTelemetry's metrics too (the analysis keeps those frames whole, up to --max-telemetry-bytes).
  const telemetry = plan.telemetryBytes === null ? null : { read: (await import('../telemetry/index.js')).readPushMetrics, maxBytes: plan.telemetryBytes };
  let startUs: number | null = null;
  let sink: RowSink;
  if (plan.format === 'parquet') {
    sink = await parquetSink(captures, plan.output!);
  } else {
    const out = new Out(io.stdout, plan.output, follow);
    sink = plan.format === 'ndjson' ? ndjsonSink(out) : tableSink(out, { captures, clock: clockFor(plan.timeFormat, () => startUs, io), follow });
  }
  let kept = 0;
  let orphans = 0;
  try {
    for (const [i, file] of captures.entries()) {
      startUs = null;
      const keep = rowPredicate(plan.filters.filters, () => startUs);
      // No row needs `time` as text: NDJSON writes it from timeUs, the table through its clock.
      const rows = new RequestRows(
        i,
        (row, s, us) => {
          if (!keep(row, s.clientIds, us)) return;
          kept++;
          if (!row.requestCaptured) orphans++;
          sink.add(row, s, us, i);
        },
        plan.bodies,
        telemetry,
        false,
      );
      rows.captureStart = (us: number) => {
        startUs = us;
        checkWindowAt(plan.filters, us);
      };
      progress?.start(file);
      await analyzeInput(file, i, opts, () => {}, rows);
      rows.finish();
      progress?.done();
    }
    sink.finish({ kept, orphans });
  } catch (e) {
    sink.abort();
    if (captures.includes('-')) io.releaseInput?.();
    throw e;
  } finally {
    stopListening();
  }
  checkNotEmpty(kept > 0, plan.filters);
  return EXIT_CLEAN;
}
