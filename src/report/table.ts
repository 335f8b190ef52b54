/** `kcid analyze` for people: a summary line, client instances, findings. */
import Table from 'cli-table3';
import type { Report } from '../analysis/report.js';
import type { Finding } from '../analysis/types.js';
import { apiLabel } from '../kafka/protocol.js';
import { sanitize } from '../base/sanitize.js';
import type { Style } from './style.js';
import { wrap } from './wrap.js';
import { displayWidth, takeWidth } from '../base/width.js';
import { makeClock, type Clock } from './clock.js';
import { groupDigits } from '../base/digits.js';

const plural = (n: number, word: string, many = `${word}s`): string => `${groupDigits(n)} ${n === 1 ? word : many}`;

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
    (report.suppressed ? `, ${groupDigits(report.suppressed)} suppressed by the baseline` : '') +
    notListedText(report) +
    captureNotesText(report)
  );
}

/**
 * "; 1 capture note": notes about reading the inputs (not findings: the "notes" before counted
 * info findings), named apart so the counts agree with the lines that follow.
 */
function captureNotesText(report: Report): string {
  const n = report.inputs.reduce((sum, i) => sum + i.notes.length, 0);
  return n === 0 ? '' : `; ${plural(n, 'capture note')}`;
}

/** " (12 connections and 3,000 findings counted, not listed: see the capture notes)", or nothing. */
function notListedText(report: Report): string {
  const n = report.notListed;
  if (n === undefined) return '';
  const parts = [n.connections > 0 ? plural(n.connections, 'connection') : '', n.findings > 0 ? plural(n.findings, 'finding') : ''].filter((p) => p !== '');
  return ` (${parts.join(' and ')} counted, not listed: see the capture notes)`;
}

function table(head: string[], style: Style, colWidths?: (number | null)[]): Table.Table {
  return new Table({
    head: head.map((h) => style.bold(h)),
    ...(colWidths === undefined ? {} : { colWidths, wordWrap: true, wrapOnWordBoundary: true }),
    style: { head: [], border: [], compact: true },
    chars: { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' },
  });
}

const list = (values: readonly string[], empty = '-'): string => (values.length === 0 ? empty : values.map(sanitize).join('\n'));

const INSTANCE_HEAD = ['Client instance ID', 'Source', 'ClientId', 'Software', 'Hosts', 'Brokers', 'Conns', 'Requests', 'First seen', 'Last seen'];
/** Columns a narrow terminal loses first, in order; the ID, ClientId, hosts and requests always stay. */
const INSTANCE_DROP_ORDER = ['Source', 'Last seen', 'First seen', 'Software', 'Brokers', 'Conns'];

/** Text without its colour codes, as wide as it shows. */
const unstyled = (s: string): string => s.replace(/\x1b\[[0-9;]*m/g, '');

/** The display width of a cell's longest line, colour codes not counted. */
const plainLength = (cell: string): number => {
  let longest = 0;
  for (const line of cell.split('\n')) longest = Math.max(longest, displayWidth(line));
  return longest;
};

/**
 * The client instances table. On a terminal narrower than the table, the least needed columns go
 * (INSTANCE_DROP_ORDER) rather than every line wrapping, and a line under the table says which.
 */
export function renderInstances(report: Report, style: Style, width = Infinity, clock: Clock = makeClock('ad')): string {
  if (report.instances.length === 0) return 'No client instances.';
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
  return fittedTable(INSTANCE_HEAD, rows, INSTANCE_DROP_ORDER, style, width, ['ClientId', 'Software', 'Brokers', 'Hosts']);
}

/**
 * A table of `rows` under `head` that fits `width` columns: while it is wider, the columns named in
 * `dropOrder` go, in that order, and a line under the table says which. If it is still wider,
 * the `wrapColumns` are narrowed, the widest first, their values broken over lines (at spaces,
 * else where the width ends): a cell grows taller, a row never wraps on the terminal.
 */
export function fittedTable(
  head: readonly string[],
  rows: readonly string[][],
  dropOrder: readonly string[],
  style: Style,
  width: number,
  wrapColumns: readonly string[] = [],
): string {
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
  const narrowed = new Set<number>();
  const wrappable = wrapColumns.map((name) => head.indexOf(name)).filter((i) => i >= 0 && keep[i]);
  while (tableWidth() > width) {
    let widest = -1;
    for (const i of wrappable) if (widths[i]! > MIN_WRAPPED + 2 && (widest < 0 || widths[i]! > widths[widest]!)) widest = i;
    if (widest < 0) break;
    widths[widest]!--;
    narrowed.add(widest);
  }
  const fitted =
    narrowed.size === 0
      ? rows
      : rows.map((row) => row.map((cell, i) => (narrowed.has(i) && plainLength(cell) > widths[i]! - 2 ? wrapCell(cell, widths[i]! - 2) : cell)));
  const pick = <T>(cells: readonly T[]): T[] => cells.filter((_, i) => keep[i]);
  const table = rowsTable(pick([...head]), style, fitted.map(pick));
  if (dropped.length === 0) return table;
  return `${table}\n${style.dim(wrap(`(${width} columns: ${dropped.join(', ')} not shown; --format json has all)`, width).join('\n'))}`;
}

/** A wrapped column keeps at least this many characters. */
const MIN_WRAPPED = 8;

/** A cell's lines each broken to `width` (cells holding colour codes are short and left alone). */
function wrapCell(cell: string, width: number): string {
  if (cell !== unstyled(cell)) return cell;
  return cell
    .split('\n')
    .flatMap((line) => wrap(line, width))
    .join('\n');
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
  const layout = (rows: readonly string[][]) => {
    // Loops, not Math.max(...rows): spreading a few hundred thousand findings overflows the stack.
    const fixed = ['Severity', 'Rule', 'Frame', 'Client -> Broker', 'API', 'Corr'].map((title) => title.length);
    let longest = 0;
    for (const r of rows) {
      for (let i = 0; i < fixed.length; i++) fixed[i] = Math.max(fixed[i]!, plainLength(r[i]!));
      longest = Math.max(longest, plainLength(r[6]!));
    }
    for (let i = 0; i < fixed.length; i++) fixed[i] = fixed[i]! + 2;
    const used = fixed.reduce((a, b) => a + b, 0) + 8; // borders
    return { fixed, longest, room: width - used };
  };
  let shape = layout(rows);
  let shown = rows;
  // Short of room for the messages: the connection and the API take two lines each, giving the message their width.
  if (shape.room < Math.min(shape.longest + 2, ROOMY_MESSAGE)) {
    const stacked = rows.map((r) => [r[0]!, r[1]!, r[2]!, r[3]!.replace(' -> ', ' ->\n'), r[4]!.replace(/ (v\d+)$/, '\n$1'), r[5]!, r[6]!]);
    const tighter = layout(stacked);
    if (tighter.room >= MIN_MESSAGE_WIDTH) (shape = tighter), (shown = stacked);
  }
  if (shape.room < MIN_MESSAGE_WIDTH) return findingsList(report, style, width);
  const message = Math.min(shape.room, shape.longest + 2);
  return rowsTable(['Severity', 'Rule', 'Frame', 'Client -> Broker', 'API', 'Corr', 'Message'], style, shown, [...shape.fixed, message]);
}

/** A message column this wide reads well; narrower, the other columns give up width (two lines each). */
const ROOMY_MESSAGE = 70;

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
    const [, rule, frame, where, api, corr] = findingRow(f, report, style);
    const at = [`frame ${frame}`, where !== '-' ? where : '', api !== '-' ? `${api} corr ${corr}` : ''].filter((p) => p !== '');
    // The head line wraps at spaces too, its continuation indented; the severity keeps its colour.
    const head = wrap(`${f.severity}${' '.repeat(Math.max(0, 7 - f.severity.length))}  ${rule}  ${at.join('  ')}`, Math.max(20, width));
    lines.push(style.severity(f.severity) + head[0]!.slice(f.severity.length).trimEnd());
    for (const more of head.slice(1)) lines.push(...wrap(more.trim(), Math.max(20, width - indent.length)).map((l) => (indent + l).trimEnd()));
    lines.push(...wrap(f.message, Math.max(20, width - indent.length)).map((l) => indent + l));
  }
  return lines.join('\n');
}

/**
 * cli-table3 lays a table out in time quadratic in its rows (every cell is checked against every
 * earlier one for row and column spans): 50,000 findings took minutes. Longer tables are built
 * ROWS_PER_TABLE rows at a time with the same column widths and joined, which prints exactly
 * what one table would (compact tables have no line between rows). 100 rather than 500: chatty's
 * 1,000 client instances (200 MB) rendered in 2.3 s against 2.7 s, the same bytes; most of what is
 * left is cli-table3 compiling ansi-regex's pattern anew for every string it measures.
 */
const ROWS_PER_TABLE = 100;

/**
 * A cell kcid lays out itself: no control characters but line breaks and colour codes (ESC [ ... m),
 * colour codes only in a cell of one line. Wire strings reach a table through sanitize, which
 * escapes every other control character.
 */
// eslint-disable-next-line no-control-regex
const DRAWN_CELL = /^(?:[^\x00-\x1f\x7f-\x9f]|\n)*$|^(?:[^\x00-\x1f\x7f-\x9f]|\x1b\[[0-9;]*m)*$/;
// eslint-disable-next-line no-control-regex
const HAS_ESC = /\x1b/;

/**
 * cli-table3's word wrapping (its utils.wordWrap, one line of a cell): words at runs of white space,
 * a word wider than the width left whole (the line is cut when drawn), widths in display columns.
 */
function wordWrap(maxLength: number, input: string): string[] {
  const lines: string[] = [];
  const split = input.split(/(\s+)/g);
  let line: string[] = [];
  let lineLength = 0;
  let whitespace: string | undefined;
  for (let i = 0; i < split.length; i += 2) {
    const word = split[i]!;
    const wordLength = displayWidth(word);
    let newLength = lineLength + wordLength;
    if (lineLength > 0 && whitespace) newLength += displayWidth(whitespace);
    if (newLength > maxLength) {
      if (lineLength !== 0) lines.push(line.join(''));
      line = [word];
      lineLength = wordLength;
    } else {
      line.push(whitespace || '', word);
      lineLength = newLength;
    }
    whitespace = split[i + 1];
  }
  if (lineLength) lines.push(line.join(''));
  return lines;
}

/** A line cut to `len` columns as cli-table3 cuts it: what fits of the first len - 1, then "…". */
function truncateLine(line: string, len: number, width: number): string {
  if (width <= len) return line;
  return `${takeWidth(line, len - 1)}…`;
}

/**
 * The table cli-table3 draws with kcid's style (compact, no lines between rows, one space of
 * padding), drawn here: without `colWidths` every column as wide as its widest line; with them, each
 * cell's lines word-wrapped to its column as cli-table3 wraps them (wordWrap, wrapOnWordBoundary)
 * and a word too wide cut with "…". Held to cli-table3's bytes for what cli-table3 measures right
 * (printable ASCII and colour codes) by test/table.test.ts; for wide characters, combining marks
 * and emoji it measures display width (base/width.ts), in one pass, where cli-table3 shortened a
 * cell a character at a time, measuring it each time (a 32 KB ClientId of CJK took over a minute).
 * cli-table3 measures each string through ansi-regex, whose pattern it compiles anew each time.
 * Null when a cell is not {@link DRAWN_CELL}, or a cell with colour codes would need wrapping or
 * cutting (cli-table3 carries the codes over lines; kcid's coloured cells are short).
 */
export function plainTable(head: readonly string[], rows: readonly string[][], colWidths?: readonly number[]): string | null {
  const cells = head.length === 0 ? rows : [head, ...rows];
  if (cells.length === 0) return null;
  const widths = colWidths === undefined ? cells[0]!.map(() => 0) : colWidths.map((w) => w - 2);
  // Per cell its line (a string, the common case) or its lines, and their display widths.
  const split: (string | string[])[][] = [];
  const lineWidths: (number | number[])[][] = [];
  for (const row of cells) {
    const lines: (string | string[])[] = [];
    const measuredRow: (number | number[])[] = [];
    for (let i = 0; i < row.length; i++) {
      const cell = row[i]!;
      if (!DRAWN_CELL.test(cell)) return null;
      const colour = HAS_ESC.test(cell);
      if (!cell.includes('\n')) {
        // One line: what wordWrap would give when it fits (the same text drawn, tested).
        const w = displayWidth(cell);
        if (colWidths === undefined || w <= widths[i]!) {
          if (colWidths === undefined && w > widths[i]!) widths[i] = w;
          lines.push(cell);
          measuredRow.push(w);
          continue;
        }
      }
      let parts: string[];
      if (colWidths === undefined) parts = cell.split('\n');
      else {
        parts = [];
        for (const l of cell.split('\n')) for (const w of wordWrap(widths[i]!, l)) parts.push(w);
        if (colour && parts.length > 1) return null;
      }
      const partWidths = parts.map(displayWidth);
      if (colWidths === undefined) for (const w of partWidths) widths[i] = Math.max(widths[i]!, w);
      else if (colour && partWidths.some((w) => w > widths[i]!)) return null;
      lines.push(parts);
      measuredRow.push(partWidths);
    }
    split.push(lines);
    lineWidths.push(measuredRow);
  }
  const spaces: string[] = [];
  const pad = (n: number): string => (n <= 0 ? '' : (spaces[n] ??= ' '.repeat(n)));
  const rule = (left: string, mid: string, right: string) => `${left}${widths.map((w) => '─'.repeat(w + 2)).join(mid)}${right}`;
  const out = [rule('┌', '┬', '┐')];
  for (let r = 0; r < split.length; r++) {
    const lines = split[r]!;
    const measuredRow = lineWidths[r]!;
    let height = 1;
    for (const l of lines) if (typeof l !== 'string') height = Math.max(height, l.length);
    for (let k = 0; k < height; k++) {
      let line = '│';
      for (let i = 0; i < widths.length; i++) {
        const w = widths[i]!;
        const cell = lines[i];
        const cellWidth = measuredRow[i];
        let text = typeof cell === 'string' ? (k === 0 ? cell : '') : (cell?.[k] ?? '');
        let tw = typeof cellWidth === 'number' ? (k === 0 ? cellWidth : 0) : (cellWidth?.[k] ?? 0);
        if (tw > w) {
          text = truncateLine(text, w, tw);
          tw = displayWidth(text);
        }
        line += ` ${text}${pad(w - tw)} │`;
      }
      out.push(line);
    }
  }
  out.push(rule('└', '┴', '┘'));
  return out.join('\n');
}

function rowsTable(head: string[], style: Style, rows: readonly string[][], colWidths?: number[]): string {
  const drawn = plainTable(
    head.map((h) => style.bold(h)),
    rows,
    colWidths,
  );
  if (drawn !== null) return drawn;
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

/** "[1] broker-1.pcapng" lines, one per input, when there are several (frames show as 2:42). */
export function inputLegendLines(report: Report): string[] {
  return report.inputs.length < 2 ? [] : report.inputs.map((input, i) => `[${i + 1}] ${input.file === '-' ? '- (standard input)' : sanitize(input.file)}`);
}

/** `width`: the terminal's columns (a fixed 200 when not a terminal, so files and CI logs are stable). */
export function renderTable(report: Report, style: Style, width = 200, clock: Clock = makeClock('ad'), terminal = false): string {
  // On a terminal the summary and the notes wrap at spaces to its width; into a file each stays one line (for grep).
  const fit = (line: string) => (terminal ? wrap(line, width).join('\n') : line);
  const parts = [fit(summaryLine(report)), ...inputLegendLines(report)];
  for (const input of report.inputs) for (const note of input.notes) parts.push(style.dim(fit(`capture note: ${sanitize(input.file)}: ${sanitize(note)}`)));
  parts.push('', style.bold('Client instances'), renderInstances(report, style, width, clock), '', style.bold('Findings'), renderFindings(report, style, width));
  if (report.findings.some((f) => f.frame !== null)) parts.push(style.dim(fit(`A finding's message, field by field with its bytes: kcid show CAPTURE FRAME${report.inputs.length > 1 ? ' (input:frame as the frame column shows it)' : ''}`)));
  if (report.config !== undefined) parts.push('', style.dim(`config: ${sanitize(report.config)}`));
  return `${parts.join('\n')}\n`;
}
