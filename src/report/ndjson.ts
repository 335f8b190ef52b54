/**
 * `kcid analyze --format ndjson`: one finding per line, each the JSON object of --format json's
 * "findings" array, for `jq -c`, log shippers and line-by-line consumers. No findings, no lines.
 */
import type { Report } from '../analysis/report.js';
import type { Finding } from '../analysis/types.js';
import { findingJson, showCommand } from './json.js';
import { safeJson } from '../base/json-text.js';

/** One line, newline included. safeJson writes no raw line breaks, so a line is always one finding. */
export function findingNdjson(report: Report, f: Finding): string {
  return `${safeJson({ ...findingJson(f), show: showCommand(report, f) })}\n`;
}

export function renderFindingsNdjson(report: Report): string {
  const parts: string[] = [];
  writeFindingsNdjson(report, (s) => parts.push(s));
  return parts.join('');
}

/** The lines written a thousand at a time, never joined into one string of them all. */
export function writeFindingsNdjson(report: Report, write: (s: string) => void): void {
  const lines: string[] = [];
  for (const f of report.findings) {
    lines.push(findingNdjson(report, f));
    if (lines.length >= 1000) write(lines.splice(0).join(''));
  }
  if (lines.length > 0) write(lines.join(''));
}
