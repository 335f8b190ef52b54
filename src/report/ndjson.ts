/**
 * `kcid analyze --format ndjson`: one finding per line, each the JSON object of --format json's
 * "findings" array, for `jq -c`, log shippers and line-by-line consumers. No findings, no lines.
 */
import type { Report } from '../analysis/report.js';
import type { Finding } from '../analysis/types.js';
import { findingJson, showCommand } from './json.js';
import { safeJson } from '../base/json-text.js';

/** One line, newline included. safeJson writes no raw line breaks, so a line is always one finding. */
export function findingNdjson(f: Finding): string {
  return `${safeJson(findingJson(f))}\n`;
}

export function renderFindingsNdjson(report: Report): string {
  return report.findings.map((f) => `${safeJson({ ...findingJson(f), show: showCommand(report, f) })}\n`).join('');
}
