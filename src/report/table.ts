/** `kcid analyze` for people: a summary line, client instances, findings. */
import Table from 'cli-table3';
import type { Report } from '../analysis/report.js';
import type { Finding } from '../analysis/types.js';
import { apiLabel } from '../kafka/messages.js';
import { sanitize } from './sanitize.js';
import type { Style } from './style.js';
import { isoMicros } from './time.js';

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
    (report.suppressed ? `, ${report.suppressed.toLocaleString('en-US')} suppressed by the baseline` : '')
  );
}

function table(head: string[], style: Style, colWidths?: (number | null)[]): Table.Table {
  return new Table({
    head: head.map((h) => style.bold(h)),
    ...(colWidths === undefined ? {} : { colWidths, wordWrap: true, wrapOnWordBoundary: true }),
    style: { head: [], border: [], compact: true },
    chars: { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' },
  });
}

/** Time of day with milliseconds, enough to find a packet in Wireshark next to its frame number. */
const clock = (us: number): string => isoMicros(us).slice(11, 23);

const list = (values: readonly string[], empty = '-'): string => (values.length === 0 ? empty : values.map(sanitize).join('\n'));

export function renderInstances(report: Report, style: Style): string {
  if (report.instances.length === 0) return 'No client instances.';
  const t = table(['Client instance ID', 'Source', 'ClientId', 'Software', 'Hosts', 'Brokers', 'Conns', 'Requests', 'First seen', 'Last seen'], style);
  for (const i of report.instances) {
    t.push([
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
  return t.toString();
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
  const plain = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, '');
  const fixed = [0, 1, 2, 3, 4, 5].map((i) => Math.max(...rows.map((r) => plain(r[i]!).length), ['Severity', 'Rule', 'Frame', 'Client -> Broker', 'API', 'Corr'][i]!.length) + 2);
  const used = fixed.reduce((a, b) => a + b, 0) + 8; // borders
  const message = Math.max(30, Math.min(width - used, Math.max(...rows.map((r) => r[6]!.length)) + 2));
  const t = table(['Severity', 'Rule', 'Frame', 'Client -> Broker', 'API', 'Corr', 'Message'], style, [...fixed, message]);
  for (const r of rows) t.push(r);
  return t.toString();
}

/** `width`: the terminal's columns (a fixed 200 when not a terminal, so files and CI logs are stable). */
export function renderTable(report: Report, style: Style, width = 200): string {
  const parts = [summaryLine(report)];
  for (const input of report.inputs) for (const note of input.notes) parts.push(style.dim(`note: ${input.file}: ${sanitize(note)}`));
  parts.push('', style.bold('Client instances'), renderInstances(report, style), '', style.bold('Findings'), renderFindings(report, style, width));
  return `${parts.join('\n')}\n`;
}
