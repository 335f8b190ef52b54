/** `kcid telemetry`: the KIP-714 conversations of the captures, their pushes decoded. */
import { captureStartUs, filterReport, parseApis } from '../analysis/filters.js';
import { analyzeAll } from '../analysis/parallel.js';
import { buildReport } from '../analysis/report.js';
import { applyConfig, captureOptions, checkInputs, clockFor, parseFilters, parseJobs, severities, styleFor, tableWidth, type CommonCliOptions, type GivenOnCli } from './commands.js';
import { EXIT_CLEAN, type Io } from './io.js';
import { Out } from './output.js';
import { Progress } from './progress.js';

export interface TelemetryCliOptions extends CommonCliOptions {
  format: string;
  timeFormat?: string;
  rule?: string[];
  config?: string;
  output?: string;
}

export async function telemetryCommand(captures: string[], o: TelemetryCliOptions, io: Io, given: GivenOnCli): Promise<number> {
  const config = applyConfig(o, given, io);
  checkInputs(captures, 'capture');
  const filters = parseFilters(o);
  if (o.api !== undefined) parseApis(o.api);
  const progress = Progress.forStream(io.stderr, o.quiet === true);
  const opts = { ...captureOptions(o, progress), decodeTelemetry: true };
  progress?.start(captures.length === 1 ? captures[0]! : `${captures.length} captures`);
  const summary = await analyzeAll(captures, opts, parseJobs(o.jobs));
  progress?.done();
  const report = filterReport(buildReport(summary, { severities: severities(config, o) }), filters);
  const out = new Out(io.stdout, o.output);
  const { writeTelemetryJson, renderTelemetryTable } = await import('../report/telemetry.js');
  // JSON is written in pieces as it is made (a capture's pushes may be more than one string holds).
  if (o.format === 'json') writeTelemetryJson(report, (s) => out.write(s));
  else out.write(renderTelemetryTable(report, await styleFor(out, io), tableWidth(out), clockFor(o, captureStartUs(report), io)));
  out.close();
  return EXIT_CLEAN;
}
