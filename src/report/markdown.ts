/**
 * `kcid analyze --format markdown`: a summary for a CI job summary ($GITHUB_STEP_SUMMARY) or a pull
 * request comment. A headline with a pass/fail mark and the counts, the summary line, one table of
 * findings per severity (at most MAX_ROWS rows each, then "and N more"), and the client instances
 * in a collapsed <details> block.
 *
 * A PR comment renders whatever the text says, so wire strings (ClientIds, software names, and the
 * messages that quote them) are never plain Markdown: they go in code spans, where links, images,
 * HTML, emphasis and @mentions are inert, after control characters are written as escapes (a
 * newline would end the table row). Inside a table a pipe ends the cell even in a code span, so
 * cells escape it (GFM, "Tables" extension).
 */
import { reachesThreshold, type Report } from '../analysis/report.js';
import type { Finding, Severity } from '../analysis/types.js';
import { apiLabel } from '../kafka/protocol.js';
import { sanitize } from '../base/sanitize.js';
import { summaryLine } from './table.js';
import { groupDigits } from '../base/digits.js';

/** Rows per findings table, and instances listed. */
export const MAX_ROWS = 50;

export interface MarkdownOptions {
  /** Decides the pass/fail mark, as --fail-on decides the exit code (default error). */
  failOn?: Severity | 'none';
}

/** Control and format characters as visible escapes; backslashes left alone (sanitized text stays as it is). */
const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

function visible(s: string): string {
  return s.replace(CONTROLS, (ch) => {
    const code = ch.charCodeAt(0);
    return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u{${code.toString(16)}}`;
  });
}

/** A code span holding `s` literally, whatever backticks it contains (CommonMark 6.1). */
export function code(s: string): string {
  const t = visible(s);
  if (t === '') return '';
  const longest = Math.max(0, ...[...t.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  const pad = t.startsWith('`') || t.endsWith('`') || (t.startsWith(' ') && t.endsWith(' ')) ? ' ' : '';
  return `${fence}${pad}${t}${pad}${fence}`;
}

/** Plain text: HTML and the Markdown characters that start links, emphasis, code or tables are escaped. */
export function plain(s: string): string {
  return visible(s)
    .replace(/[&<>]/g, (ch) => (ch === '&' ? '&amp;' : ch === '<' ? '&lt;' : '&gt;'))
    .replace(/[\\`*_[\]|~]/g, (ch) => `\\${ch}`);
}

/** A table cell: a pipe inside, even inside a code span, must be escaped. */
const cell = (s: string): string => s.replace(/\|/g, '\\|');

const row = (cells: readonly string[]): string => `| ${cells.map(cell).join(' | ')} |`;

function table(head: readonly string[], align: readonly ('l' | 'r')[], rows: readonly string[][]): string[] {
  return [`| ${head.join(' | ')} |`, `| ${align.map((a) => (a === 'r' ? '---:' : '---')).join(' | ')} |`, ...rows.map(row)];
}

const TITLE: Record<Severity, string> = { error: 'Errors', warning: 'Warnings', info: 'Notes' };
const NOUN: Record<Severity, [string, string]> = { error: ['error', 'errors'], warning: ['warning', 'warnings'], info: ['note', 'notes'] };
const SEVERITIES: readonly Severity[] = ['error', 'warning', 'info'];

const count = (n: number, severity: Severity): string => `${groupDigits(n)} ${NOUN[severity][n === 1 ? 0 : 1]}`;

function findingRow(f: Finding, multiple: boolean): string[] {
  const frame = f.frame === null ? '-' : multiple ? `${f.input + 1}:${f.frame}` : String(f.frame);
  return [
    code(f.rule),
    frame,
    f.client === null ? '-' : `${f.client} → ${f.broker ?? '?'}`,
    f.apiKey === null ? '-' : apiLabel(f.apiKey, f.apiVersion ?? 0),
    code(f.message),
  ];
}

function findingsSection(report: Report, severity: Severity): string[] {
  const findings = report.findings.filter((f) => f.severity === severity);
  if (findings.length === 0) return [];
  const multiple = report.inputs.length > 1;
  const out = [
    `### ${TITLE[severity]} (${groupDigits(findings.length)})`,
    '',
    ...table(['Rule', 'Frame', 'Client → Broker', 'API', 'Message'], ['l', 'r', 'l', 'l', 'l'], findings.slice(0, MAX_ROWS).map((f) => findingRow(f, multiple))),
  ];
  if (findings.length > MAX_ROWS) out.push('', `…and ${groupDigits(findings.length - MAX_ROWS)} more.`);
  out.push('');
  return out;
}

/** Several values in one cell, one per line. */
const lines = (values: readonly string[], empty: string): string => (values.length === 0 ? empty : values.join('<br>'));

function instancesSection(report: Report): string[] {
  if (report.instances.length === 0) return [];
  const rows = report.instances.slice(0, MAX_ROWS).map((i) => [
    i.clientInstanceId === null ? '_(none)_' : code(i.clientInstanceId),
    i.source,
    lines(
      i.clientIds.map((c) => code(sanitize(c)) || '""'),
      '_(null)_',
    ),
    lines(
      i.software.map((s) => code(sanitize(`${s.name} ${s.version}`.trim()))),
      '-',
    ),
    lines(i.clientAddresses, '-'),
    lines(i.brokers, '-'),
    String(i.connections.length),
    String(i.requests),
  ]);
  const out = [
    `<details><summary>Client instances (${groupDigits(report.instances.length)})</summary>`,
    '',
    ...table(['Client instance ID', 'Source', 'ClientId', 'Software', 'Hosts', 'Brokers', 'Conns', 'Requests'], ['l', 'l', 'l', 'l', 'l', 'l', 'r', 'r'], rows),
  ];
  if (report.instances.length > MAX_ROWS) out.push('', `…and ${groupDigits(report.instances.length - MAX_ROWS)} more.`);
  out.push('', '</details>', '');
  return out;
}

function headline(report: Report, failOn: Severity | 'none'): string {
  const f = report.counts.findings;
  const total = f.error + f.warning + f.info;
  const mark = reachesThreshold(report, failOn) ? '❌' : '✅';
  return `## ${mark} kcid: ${total === 0 ? 'no findings' : SEVERITIES.map((s) => count(f[s], s)).join(', ')}`;
}

function capturesSection(report: Report): string[] {
  if (report.inputs.length === 1) return [`Capture: ${code(sanitize(report.inputs[0]!.file))}`, ''];
  return ['Captures:', '', ...report.inputs.map((i, n) => `${n + 1}. ${code(sanitize(i.file))}`), ''];
}

export function renderMarkdown(report: Report, opts: MarkdownOptions = {}): string {
  const notes = report.inputs.flatMap((i) => i.notes.map((n) => `- Capture note: ${code(sanitize(i.file))}: ${plain(n)}`));
  return [
    headline(report, opts.failOn ?? 'error'),
    '',
    plain(summaryLine(report)),
    '',
    ...(report.config === undefined ? [] : [`Rule settings from ${code(sanitize(report.config))}.`, '']),
    ...capturesSection(report),
    ...(notes.length === 0 ? [] : [...notes, '']),
    ...SEVERITIES.flatMap((s) => findingsSection(report, s)),
    ...instancesSection(report),
  ].join('\n');
}
