/**
 * `tcpdump -U -w - port 9092 | kcid analyze - --follow`: findings are printed as they are found
 * (one line each; one JSON object each with --format ndjson), those across connections too, when
 * their evidence is complete (analysis/live-checks.ts); then, at the end of input or on Ctrl-C, the
 * findings only the whole capture can show and the summary.
 */
import { filterReport, hasFilters } from '../analysis/filters.js';
import { mergeResults } from '../analysis/parallel.js';
import { reachesThreshold, type Report } from '../analysis/report.js';
import { REPORT_RULES, TELEMETRY_RULES } from '../analysis/rules/index.js';
import { analyzeInput, type AnalyzeOptions } from '../analysis/run.js';
import { LiveChecks } from '../analysis/live-checks.js';
import type { Finding } from '../analysis/types.js';
import { safeJson } from '../base/json-text.js';
import { sanitize } from '../base/sanitize.js';
import { apiLabel } from '../kafka/protocol.js';
import type { Clock } from '../report/clock.js';
import { findingJson } from '../report/json.js';
import type { Style } from '../report/style.js';
import { EXIT_CLEAN, EXIT_FINDINGS, type Io } from './io.js';
import { Out } from './output.js';
import type { CapturePlan } from './plan.js';
import { reportFrom, type ReportPlan } from './report-writer.js';
import { checkNotEmpty, checkWindowAt, clockFor, readyCapture, styleFor, tableWidth } from './wiring.js';

/** One finding as one line, for follow mode's table format: its time first (-t), as tcpdump prints. */
function findingLine(f: Finding, style: Style, clock: Clock): string {
  const api = f.apiKey === null ? '' : `  ${apiLabel(f.apiKey, f.apiVersion ?? 0)} corr ${f.correlationId}`;
  const where = f.client === null ? '' : `  ${f.client} -> ${f.broker}`;
  const time = f.timeUs === null ? '' : `${clock(f.timeUs)}  `;
  return `${time}${style.severity(f.severity)}  ${f.rule}  frame ${f.frame ?? '-'}${where}${api}  ${f.message}\n`;
}

export async function runFollow(file: string, capture: CapturePlan, p: ReportPlan, io: Io): Promise<number> {
  const settings = p.severities;
  const filters = p.filters.filters;
  const ndjson = p.format === 'ndjson';
  const out = new Out(io.stdout, p.output, true);
  const style = await styleFor(out, io);
  const { renderInstances, summaryLine } = await import('../report/table.js');
  const controller = new AbortController();
  const stopListening = io.onInterrupt?.(() => controller.abort()) ?? (() => {});
  let startUs: number | null = null;
  const clock = clockFor(p.timeFormat, () => startUs, io);
  const opts: AnalyzeOptions = { ...readyCapture(capture, null, p.filters), signal: controller.signal };
  const show = (f: Finding) => {
    const setting = settings.get(f.rule);
    if (setting === 'off') return;
    const shown = setting === undefined ? f : { ...f, severity: setting };
    if (hasFilters(filters) && filterReport(single(shown), filters).findings.length === 0) return;
    // Counted before it is written: if the reader has gone, the run stops with this finding's code.
    if (reachesThreshold(single(shown), p.failOn)) io.gate?.raise(EXIT_FINDINGS);
    out.write(ndjson ? `${safeJson(findingJson(shown))}\n` : findingLine(shown, style, clock));
  };
  // The checks across connections print each finding when its evidence is complete, not at the end.
  const live = new LiveChecks(show);
  opts.live = live;
  let result;
  try {
    result = await analyzeInput(file, 0, opts, show, {
      captureStart: (us) => {
        startUs = us;
        checkWindowAt(p.filters, us);
      },
    });
  } catch (e) {
    if (file === '-') io.releaseInput?.();
    throw e;
  } finally {
    stopListening();
  }
  const summary = mergeResults([result]);
  const report = reportFrom(summary, p);
  checkNotEmpty(report.connections.length > 0, p.filters);
  const code = reachesThreshold(report, p.failOn) ? EXIT_FINDINGS : EXIT_CLEAN;
  io.gate?.raise(code);
  const crossRules = new Set([...REPORT_RULES, ...TELEMETRY_RULES].map((r) => r.id));
  for (const f of report.findings) if (crossRules.has(f.rule) && !live.shown(f)) out.write(ndjson ? `${safeJson(findingJson(f))}\n` : findingLine(f, style, clock));
  if (ndjson) {
    const config = report.config === undefined ? {} : { config: report.config };
    out.write(`${safeJson({ summary: { ...report.counts, findings: { ...report.counts.findings }, ...config } })}\n`);
  } else {
    out.write(`\n${summaryLine(report)}\n${renderInstances(report, style, tableWidth(out), clock)}\n`);
    if (report.config !== undefined) out.write(`${style.dim(`config: ${sanitize(report.config)}`)}\n`);
  }
  out.close();
  return code;
}

/** A report holding one finding, so the report filters can judge it. */
function single(f: Finding): Report {
  return {
    inputs: [],
    instances: [],
    connections: [],
    findings: [f],
    telemetry: [],
    counts: { connections: 0, requests: 0, responses: 0, instances: 0, findings: { error: 0, warning: 0, info: 0, [f.severity]: 1 } },
  };
}
