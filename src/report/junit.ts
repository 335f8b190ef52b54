/**
 * `kcid analyze --format junit`: JUnit XML, the format CI test reporters read (Jenkins, GitLab,
 * GitHub test-report actions, Azure DevOps). One <testsuite> "kcid" with one <testcase> per rule,
 * classname "kcid" and name the rule id, so a CI shows which rules pass:
 *
 *  - a rule with findings at or above --fail-on fails: one <failure> whose type is the severity,
 *    whose message is the count ("2 errors") and whose text has one line per finding;
 *  - a rule whose findings are all below --fail-on passes, its findings in <system-out>: they do
 *    not fail the run, so they must not turn the published report red (and "skipped" would say
 *    the rule did not run, which it did);
 *  - a rule without findings passes; so does a rule turned off (its findings were dropped).
 *
 * The suite's <properties> name the captures and, with a baseline, how many findings it
 * suppressed; its <system-out> is the summary line. Valid against the Jenkins JUnit schema
 * (test/schemas/jenkins-junit-4.xsd). Byte-stable: no times or host names.
 *
 * Whatever the strings hold, the XML stays well-formed: markup characters are escaped, and the
 * characters XML 1.0 (§2.2) forbids (most C0 controls, lone surrogates, U+FFFE and U+FFFF), as
 * well as the ones unsafe on a terminal, are written as visible escapes.
 */
import { SEVERITY_RANK, type Report } from '../analysis/report.js';
import { RULES } from '../analysis/rules/index.js';
import type { Finding, Severity } from '../analysis/types.js';
import { apiLabel } from '../kafka/protocol.js';
import { sanitize } from '../base/sanitize.js';
import { summaryLine } from './table.js';

/** Not allowed in XML 1.0, or unsafe on a terminal (C1 controls, bidi and zero-width characters). */
const UNSAFE = /[^\t\n\r\x20-\x7e\xa0-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]|[\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/gu;

function visible(ch: string): string {
  const code = ch.codePointAt(0)!;
  return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u{${code.toString(16)}}`;
}

const MARKUP: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };

/** Character data and attribute values alike. */
export function xmlEscape(s: string): string {
  return s.replace(UNSAFE, visible).replace(/[&<>"']/g, (ch) => MARKUP[ch]!);
}

/** An attribute value: also keeps tabs and line breaks, which attribute normalisation would turn into spaces. */
function attr(s: string): string {
  return xmlEscape(s).replace(/[\t\n\r]/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

/** Text content: a bare CR would be read as a line feed. */
const text = (s: string): string => xmlEscape(s).replace(/\r/g, '&#13;');

const NOUN: Record<Severity, [string, string]> = { error: ['error', 'errors'], warning: ['warning', 'warnings'], info: ['note', 'notes'] };

const count = (n: number, severity: Severity): string => `${n} ${NOUN[severity][n === 1 ? 0 : 1]}`;

/** "fixtures/mix.pcapng frame 42: 10.2.0.24:43001 -> 10.1.0.12:9092, Metadata v12, correlation 2: message". */
export function findingLine(f: Finding, report: Report): string {
  const file = report.inputs[f.input]?.file ?? `input ${f.input + 1}`;
  const where = [f.frame === null ? sanitize(file) : `${sanitize(file)} frame ${f.frame}`];
  if (f.client !== null) where.push(`${f.client} -> ${f.broker ?? '?'}`);
  if (f.apiKey !== null) where.push(apiLabel(f.apiKey, f.apiVersion ?? 0));
  if (f.correlationId !== null) where.push(`correlation ${f.correlationId}`);
  return `${where.join(', ')}: ${f.message}`;
}

/** Rule ids in registry order, then any others the findings name (a summary from a newer kcid). */
function ruleIds(report: Report): string[] {
  const ids = RULES.map((r) => r.id);
  const known = new Set(ids);
  const others = [...new Set(report.findings.map((f) => f.rule))].filter((id) => !known.has(id)).sort();
  return [...ids, ...others];
}

/** `failOn`: the run's --fail-on; findings below it are passed test cases (default: error, as the CLI). */
export function renderJunit(report: Report, opts: { failOn?: Severity | 'none' } = {}): string {
  const failOn = opts.failOn ?? 'error';
  const fails = (s: Severity): boolean => failOn !== 'none' && SEVERITY_RANK[s] >= SEVERITY_RANK[failOn];
  const byRule = new Map<string, Finding[]>();
  for (const f of report.findings) {
    const list = byRule.get(f.rule);
    if (list === undefined) byRule.set(f.rule, [f]);
    else list.push(f);
  }
  const ids = ruleIds(report);
  const cases: string[] = [];
  let failures = 0;
  for (const id of ids) {
    const findings = byRule.get(id) ?? [];
    const open = `    <testcase classname="kcid" name="${attr(id)}" time="0"`;
    if (findings.length === 0) {
      cases.push(`${open}/>`);
      continue;
    }
    const body = findings.map((f) => text(findingLine(f, report))).join('\n');
    // A rule's findings share its severity (overrides are per rule); the worst one decides.
    const severity = findings.some((f) => f.severity === 'error') ? 'error' : findings.some((f) => f.severity === 'warning') ? 'warning' : 'info';
    if (!fails(severity)) {
      cases.push(`${open}>\n      <system-out>${body}</system-out>\n    </testcase>`);
    } else {
      failures++;
      const n = findings.filter((f) => f.severity === severity).length;
      cases.push(`${open}>\n      <failure type="${severity}" message="${attr(count(n, severity))}">${body}</failure>\n    </testcase>`);
    }
  }
  const properties = report.inputs.map((i) => `      <property name="capture" value="${attr(sanitize(i.file))}"/>`);
  if (report.suppressed !== undefined) properties.push(`      <property name="suppressed" value="${report.suppressed}"/>`);
  if (report.config !== undefined) properties.push(`      <property name="config" value="${attr(sanitize(report.config))}"/>`);
  const counts = `tests="${ids.length}" failures="${failures}" errors="0"`;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="kcid" ${counts} time="0">`,
    `  <testsuite name="kcid" ${counts} skipped="0" time="0">`,
    ...(properties.length === 0 ? [] : ['    <properties>', ...properties, '    </properties>']),
    ...cases,
    `    <system-out>${text(summaryLine(report))}</system-out>`,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}
