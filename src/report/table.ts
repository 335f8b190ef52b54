/** `kcid analyze` for people: a summary line, client instances, findings. */
import Table from 'cli-table3';
import type { Report } from '../analysis/report.js';
import type { Finding } from '../analysis/types.js';
import { apiLabel } from '../kafka/protocol.js';
import { sanitize } from '../base/sanitize.js';
import type { Style } from './style.js';
import { isoMicros } from '../base/time.js';

const plural = (n: number, word: string, many = `${word}s`): string => `${n.toLocaleString('en-US')} ${n === 1 ? word : many}`;

export function summaryLine(report: Report): string {
  const packets = report.inputs.reduce((n, i) => n + i.packets, 0);
  const ports = [...new Set(report.inputs.flatMap((i) => i.kafkaPorts))].sort((a, b) => a - b);
  const f = report.counts.findings;
  return (
    `${plural(report.inputs.length, 'capture')}, ${plural(packets, 'packet')}, ` +
    `${plural(report.counts.connections, 'Kafka connection')}` +
    (ports.length > 0 ? ` (${ports.length === 1 ? 'port' : 'ports'} ${ports.join(', ')})` : '') +
    `, ${plural(report.counts.requests, 'request')}, ${plural(report.counts.instances, 'client instance')}: ` +
    `${plural(f.error, 'error')}, ${plural(f.warning, 'warning')}, ${plural(f.info, 'note')}` +
    (report.suppressed ? `, ${report.suppressed.toLocaleString('en-US')} suppressed by the baseline` : '') +
    notListedText(report)
  );
}

/** " (12 connections and 3,000 findings counted, not listed: see the notes)", or nothing. */
function notListedText(report: Report): string {
  const n = report.notListed;
  if (n === undefined) return '';
  const parts = [n.connections > 0 ? plural(n.connections, 'connection') : '', n.findings > 0 ? plural(n.findings, 'finding') : ''].filter((p) => p !== '');
  return ` (${parts.join(' and ')} counted, not listed: see the notes)`;
}

function table(head: string[], style: Style, colWidths?: (number | null)[]): Table.Table {
  return new Table({
    head: head.map((h) => style.bold(h)),
    ...(colWidths === undefined ? {} : { colWidths, wordWrap: true, wrapOnWordBoundary: true }),
    style: { head: [], border: [], compact: true },
    chars: { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' },
  });
}

/**
 * Times in UTC with milliseconds, enough to find a packet in Wireshark next to its frame number:
 * the time of day when every time shown falls on one day, else the date too (a capture spanning
 * midnight must not show a last-seen earlier than its first-seen).
 */
function clockFor(times: readonly number[]): (us: number) => string {
  const day = (us: number) => isoMicros(us).slice(0, 10);
  const oneDay = times.every((t) => day(t) === day(times[0]!));
  return oneDay ? (us) => isoMicros(us).slice(11, 23) : (us) => `${isoMicros(us).slice(0, 10)} ${isoMicros(us).slice(11, 23)}`;
}

const list = (values: readonly string[], empty = '-'): string => (values.length === 0 ? empty : values.map(sanitize).join('\n'));

const INSTANCE_HEAD = ['Client instance ID', 'Source', 'ClientId', 'Software', 'Hosts', 'Brokers', 'Conns', 'Requests', 'First seen', 'Last seen'];
/** Columns a narrow terminal loses first, in order; the ID, ClientId, hosts and requests always stay. */
const INSTANCE_DROP_ORDER = ['Source', 'Last seen', 'First seen', 'Software', 'Brokers', 'Conns'];

/** Text without its colour codes, as wide as it shows. */
const unstyled = (s: string): string => s.replace(/\x1b\[[0-9;]*m/g, '');

/** The width of a cell's longest line, colour codes not counted. */
const plainLength = (cell: string): number => {
  let longest = 0;
  for (const line of unstyled(cell).split('\n')) longest = Math.max(longest, line.length);
  return longest;
};

/**
 * The client instances table. On a terminal narrower than the table, the least needed columns go
 * (INSTANCE_DROP_ORDER) rather than every line wrapping, and a line under the table says which.
 */
export function renderInstances(report: Report, style: Style, width = Infinity): string {
  if (report.instances.length === 0) return 'No client instances.';
  const clock = clockFor(report.instances.flatMap((i) => [i.firstUs, i.lastUs]));
  const rows: string[][] = [];
  for (const i of report.instances) {
    rows.push([
      i.clientInstanceId ?? style.dim('(none)'),
      i.source,
      list(i.clientIds, style.dim('(null)')),
      list(i.software.map((s) => `${s.name} ${s.version}`.trim())),
      list(i.clientAddresses),
      list(i.brokers),
      String(i.connections.length),
      String(i.requests),
      clock(i.firstUs),
      clock(i.lastUs),
    ]);
  }
  return fittedTable(INSTANCE_HEAD, rows, INSTANCE_DROP_ORDER, style, width);
}

/**
 * A table of `rows` under `head` that fits `width` columns: while it is wider, the columns named in
 * `dropOrder` go, in that order, and a line under the table says which.
 */
export function fittedTable(head: readonly string[], rows: readonly string[][], dropOrder: readonly string[], style: Style, width: number): string {
  // Each column as wide as its longest line plus padding, and one border more than columns.
  const widths = head.map((h) => h.length + 2);
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i]!, plainLength(cell) + 2)));
  const keep = head.map(() => true);
  const tableWidth = () => widths.reduce((sum, w, i) => sum + (keep[i] ? w + 1 : 0), 1);
  const dropped: string[] = [];
  for (const name of dropOrder) {
    if (tableWidth() <= width) break;
    keep[head.indexOf(name)] = false;
    dropped.push(name);
  }
  const pick = <T>(cells: readonly T[]): T[] => cells.filter((_, i) => keep[i]);
  const table = rowsTable(pick(head), style, rows.map(pick));
  if (dropped.length === 0) return table;
  return `${table}\n${style.dim(`(${width} columns: ${dropped.join(', ')} not shown; --format json has all)`)}`;
}

function findingRow(f: Finding, report: Report, style: Style): string[] {
  const where = f.client === null ? '-' : `${f.client} -> ${f.broker}`;
  const frame = f.frame === null ? '-' : report.inputs.length > 1 ? `${f.input + 1}:${f.frame}` : String(f.frame);
  return [
    style.severity(f.severity),
    f.rule,
    frame,
    where,
    f.apiKey === null ? '-' : apiLabel(f.apiKey, f.apiVersion ?? 0),
    f.correlationId === null ? '-' : String(f.correlationId),
    f.message,
  ];
}

/** The message column takes what the terminal width leaves, so long messages wrap instead of the table. */
export function renderFindings(report: Report, style: Style, width: number): string {
  if (report.findings.length === 0) return 'No findings.';
  const rows = report.findings.map((f) => findingRow(f, report, style));
  // Loops, not Math.max(...rows): spreading a few hundred thousand findings overflows the stack.
  const fixed = ['Severity', 'Rule', 'Frame', 'Client -> Broker', 'API', 'Corr'].map((title) => title.length);
  let longest = 0;
  for (const r of rows) {
    for (let i = 0; i < fixed.length; i++) fixed[i] = Math.max(fixed[i]!, unstyled(r[i]!).length);
    longest = Math.max(longest, r[6]!.length);
  }
  for (let i = 0; i < fixed.length; i++) fixed[i] = fixed[i]! + 2;
  const used = fixed.reduce((a, b) => a + b, 0) + 8; // borders
  if (width - used < MIN_MESSAGE_WIDTH) return findingsList(report, style, width);
  const message = Math.min(width - used, longest + 2);
  return rowsTable(['Severity', 'Rule', 'Frame', 'Client -> Broker', 'API', 'Corr', 'Message'], style, rows, [...fixed, message]);
}

/** Narrower than this, the message column is unreadable: findings are listed instead of tabled. */
const MIN_MESSAGE_WIDTH = 30;

/**
 * Findings for a narrow terminal: per finding, a line with severity, rule, frame, connection and
 * API, then the message indented and wrapped at word boundaries to the width.
 */
function findingsList(report: Report, style: Style, width: number): string {
  const indent = '    ';
  const lines: string[] = [];
  for (const f of report.findings) {
    const [severity, rule, frame, where, api, corr] = findingRow(f, report, style);
    const at = [`frame ${frame}`, where !== '-' ? where : '', api !== '-' ? `${api} corr ${corr}` : ''].filter((p) => p !== '');
    lines.push(`${severity}${' '.repeat(Math.max(0, 7 - f.severity.length))}  ${rule}  ${at.join('  ')}`);
    lines.push(...wrap(f.message, Math.max(20, width - indent.length)).map((l) => indent + l));
  }
  return lines.join('\n');
}

/** `text` in lines of at most `width` characters, broken at spaces (a longer word gets a line of its own). */
function wrap(text: string, width: number): string[] {
  const out: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      out.push(line);
      line = word;
    } else {
      line = line === '' ? word : `${line} ${word}`;
    }
  }
  out.push(line);
  return out;
}

/**
 * cli-table3 lays a table out in time quadratic in its rows (every cell is checked against every
 * earlier one for row and column spans): 50,000 findings took minutes. Longer tables are built
 * ROWS_PER_TABLE rows at a time with the same column widths and joined, which prints exactly
 * what one table would (compact tables have no line between rows).
 */
const ROWS_PER_TABLE = 500;

function rowsTable(head: string[], style: Style, rows: readonly string[][], colWidths?: number[]): string {
  const build = (withHead: boolean, widths: number[] | undefined, from: number): string[] => {
    const t = table(withHead ? head : [], style, widths);
    for (let i = from; i < Math.min(rows.length, from + ROWS_PER_TABLE); i++) t.push(rows[i]!);
    return t.toString().split('\n');
  };
  if (rows.length <= ROWS_PER_TABLE) return build(true, colWidths, 0).join('\n');
  let widths = colWidths;
  if (widths === undefined) {
    // Each column as wide as the widest piece made it, read from each piece's top border.
    const w = head.map(() => 0);
    for (let from = 0; from < rows.length; from += ROWS_PER_TABLE) {
      const top = unstyled(build(from === 0, undefined, from)[0]!);
      top.slice(1, -1).split('┬').forEach((seg, i) => (w[i] = Math.max(w[i]!, seg.length)));
    }
    widths = w;
  }
  const lines: string[] = [];
  for (let from = 0; from < rows.length; from += ROWS_PER_TABLE) {
    const piece = build(from === 0, widths, from);
    // Keep the first piece's top border and header and the last piece's bottom border only.
    const last = from + ROWS_PER_TABLE >= rows.length;
    for (let i = from === 0 ? 0 : 1; i < piece.length - (last ? 0 : 1); i++) lines.push(piece[i]!);
  }
  return lines.join('\n');
}

/** `width`: the terminal's columns (a fixed 200 when not a terminal, so files and CI logs are stable). */
export function renderTable(report: Report, style: Style, width = 200): string {
  const parts = [summaryLine(report)];
  for (const input of report.inputs) for (const note of input.notes) parts.push(style.dim(`note: ${input.file}: ${sanitize(note)}`));
  parts.push('', style.bold('Client instances'), renderInstances(report, style, width), '', style.bold('Findings'), renderFindings(report, style, width));
  return `${parts.join('\n')}\n`;
}
