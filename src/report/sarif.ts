/**
 * `kcid analyze --format sarif`: SARIF 2.1.0 (OASIS), for code-scanning dashboards. One run; the
 * driver lists every rule (summary, explanation, spec text, default level); each finding is a
 * result at its capture file.
 *
 * SARIF locates results in files by line or by byte; a capture has neither lines nor (in kcid's
 * findings) byte offsets, but it has frame numbers, which is what Wireshark's "Go to packet" takes.
 * So a finding's frame is its region's startLine: viewers then show "capture.pcapng:42", read as
 * frame 42. The same number, with the rest of the finding (client, broker, API, correlation ID,
 * client instance ID), is in the result's properties for tools that read them. Findings about a
 * whole capture have no region. Standard input has no URI: its location only has a description.
 *
 * partialFingerprints carries the baseline fingerprint (src/analysis/baseline.ts), which does not
 * change with frame numbers, so a dashboard tracks one finding across runs. With a baseline,
 * every result is baselineState "new" and run.properties.suppressed counts the others.
 * Rule settings (--rule, kcid.config.json) are in the run's invocation as
 * ruleConfigurationOverrides (§3.20.5): the level a rule was given, or enabled false for "off";
 * each result's level is already its rule's level in this run.
 * Byte-stable: no times, paths as given.
 */
import { isAbsolute, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Fingerprinter } from '../analysis/baseline.js';
import type { Report, SeveritySetting } from '../analysis/report.js';
import { RULES } from '../analysis/rules/index.js';
import type { Finding, Severity } from '../analysis/types.js';
import { findingJson } from './json.js';
import { JsonList, writeJson } from '../base/json-text.js';

export const SARIF_SCHEMA = 'https://json.schemastore.org/sarif-2.1.0.json';

/** SARIF §3.27.10: error, warning, note. */
const LEVEL: Record<Severity, 'error' | 'warning' | 'note'> = { error: 'error', warning: 'warning', info: 'note' };

/** A path as a URI reference (RFC 3986): relative paths stay relative, absolute ones become file: URIs. */
export function fileUri(path: string): string {
  const wellFormed = path.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');
  // The WHATWG URL encoder leaves some characters RFC 3986 does not allow in a path (| [ ] ^ ...).
  if (isAbsolute(wellFormed)) return pathToFileURL(wellFormed).href.replace(/[^A-Za-z0-9\-._~!$&'()*+,;=:@/%]/g, encodeURIComponent);
  return wellFormed.split(sep === '\\' ? /[\\/]/ : '/').map(encodeURIComponent).join('/');
}

/** `index` points into run.artifacts; the artifacts themselves are listed without one. */
function artifactLocation(file: string, index: number | null): Record<string, unknown> {
  const where = file === '-' ? { description: { text: 'standard input' } } : { uri: fileUri(file) };
  return index === null ? where : { ...where, index };
}

/** `informationUri`: where kcid is documented, when it has a public home. */
/** `severities`: the rule settings in force (rule id → severity or off), listed as overrides where they differ from the default. */
export function renderSarif(report: Report, toolVersion: string, informationUri?: string, severities: ReadonlyMap<string, SeveritySetting> = new Map()): string {
  const parts: string[] = [];
  writeSarif(report, (s) => parts.push(s), toolVersion, informationUri, severities);
  return parts.join('');
}

/**
 * The SARIF log written in pieces as it is made, the results a batch at a time (see writeJson):
 * the same bytes as one JSON.stringify, without one string of the whole log (600,000 findings
 * made more than V8's longest string).
 */
export function writeSarif(
  report: Report,
  write: (s: string) => void,
  toolVersion: string,
  informationUri?: string,
  severities: ReadonlyMap<string, SeveritySetting> = new Map(),
): void {
  const ruleIndex = new Map(RULES.map((r, i) => [r.id, i]));
  const fp = new Fingerprinter(report);
  const baseline = report.suppressed !== undefined;
  const results = new JsonList(report.findings, (f) => {
    const index = ruleIndex.get(f.rule);
    const physicalLocation: Record<string, unknown> = { artifactLocation: artifactLocation(report.inputs[f.input]?.file ?? '-', f.input) };
    if (f.frame !== null) physicalLocation.region = { startLine: f.frame };
    return {
      ruleId: f.rule,
      ...(index === undefined ? {} : { ruleIndex: index }),
      level: LEVEL[f.severity],
      message: { text: f.message },
      locations: [{ physicalLocation }],
      partialFingerprints: { 'kcid/v1': fp.fingerprint(f) },
      ...(baseline ? { baselineState: 'new' } : {}),
      properties: findingProperties(f),
    };
  });
  const driver = {
    name: 'kcid',
    version: toolVersion,
    ...(informationUri === undefined ? {} : { informationUri }),
    rules: RULES.map((r) => ({
      id: r.id,
      shortDescription: { text: r.summary },
      fullDescription: { text: r.explanation },
      help: { text: r.spec },
      defaultConfiguration: { level: LEVEL[r.severity] },
    })),
  };
  const overrides = RULES.flatMap((r, index) => {
    const s = severities.get(r.id);
    if (s === undefined || s === r.severity) return [];
    return [{ descriptor: { id: r.id, index }, configuration: s === 'off' ? { enabled: false } : { level: LEVEL[s] } }];
  });
  const log = {
    $schema: SARIF_SCHEMA,
    version: '2.1.0',
    runs: [
      {
        tool: { driver },
        ...(overrides.length === 0 ? {} : { invocations: [{ executionSuccessful: true, ruleConfigurationOverrides: overrides }] }),
        artifacts: report.inputs.map((i) => ({ location: artifactLocation(i.file, null) })),
        results,
        ...(baseline || report.config !== undefined
          ? { properties: { ...(baseline ? { suppressed: report.suppressed } : {}), ...(report.config === undefined ? {} : { config: report.config }) } }
          : {}),
      },
    ],
  };
  // Deep enough to reach runs[0].results: the log, runs, the run, then the list.
  writeJson(log, 2, write, 4);
}

/** The JSON finding's fields that SARIF has no place of its own for (rule, level and message do). */
function findingProperties(f: Finding): Record<string, unknown> {
  const { rule: _rule, severity: _severity, message: _message, input: _input, ...rest } = findingJson(f);
  return rest;
}
