/**
 * `kcid analyze --format html`: one self-contained page. Nothing is fetched when it is opened
 * (no fonts, scripts or images from anywhere: the Content-Security-Policy says so too), it works
 * from a file:// path or a CI artifact, and it prints. In order: the summary line and inputs,
 * findings, the per-instance timeline, request and error rates per broker, latency by API, the
 * instances and connections tables, telemetry per instance.
 *
 * Bounded whatever the capture: lanes, bars, ticks, table rows and chart columns have caps (see
 * the MAX_ constants), what a cap aggregated or left out is said under the part it concerns, and
 * the page of 1,000,000 requests stays a few MB (tested).
 */
import { latencyPercentiles } from '../../analysis/latency.js';
import { percentileText } from '../clients.js';
import { SEVERITY_RANK, type Report } from '../../analysis/report.js';
import type { Finding } from '../../analysis/types.js';
import { API_KEY as API, apiLabel, apiName } from '../../kafka/protocol.js';
import { isoMicros } from '../../base/time.js';
import { summaryLine } from '../table.js';
import { CSP, SCRIPT, STYLE } from './assets.js';
import { latencies, rates, renderLatency, renderRates } from './charts.js';
import { count, esc, plural } from './text.js';
import { MAX_BARS_PER_LANE, MAX_MARKERS, renderTimeline, timeRange } from './timeline.js';

/** Rows listed per table at most (findings, instances, connections). */
export const MAX_TABLE_ROWS = 5000;

export interface HtmlOptions {
  /** kcid's version, in the footer. */
  version?: string;
}

const td = (text: string, cls = '', sort?: string | number): string =>
  `<td${cls === '' ? '' : ` class="${cls}"`}${sort === undefined ? '' : ` data-sort="${esc(String(sort))}"`}>${esc(text)}</td>`;
const tdList = (values: readonly string[]): string => `<td>${values.length === 0 ? '-' : values.map(esc).join('<br>')}</td>`;

function table(id: string, head: readonly (string | [string, 'num'])[], rows: readonly string[]): string {
  const th = head.map((h) => (typeof h === 'string' ? `<th scope="col">${esc(h)}</th>` : `<th scope="col" class="num">${esc(h[0])}</th>`)).join('');
  return `<div class="scroll"><table id="${id}" class="sortable"><thead><tr>${th}</tr></thead><tbody>\n${rows.join('\n')}\n</tbody></table></div>`;
}

function capNote(shown: number, total: number, what: string): string {
  return shown < total ? `<p class="note">The first ${count(shown)} of ${count(total)} ${what} are listed.</p>` : '';
}

function inputsSection(report: Report): string {
  const multiple = report.inputs.length > 1;
  const rows = report.inputs.map((i, n) =>
    [
      '<tr>',
      multiple ? td(String(n + 1), 'num') : '',
      td(i.file, 'mono'),
      td(i.gzip ? `${i.format}+gzip` : i.format),
      td(count(i.packets), 'num', i.packets),
      td(count(i.bytes), 'num', i.bytes),
      td(i.kafkaPorts.join(', ') || '-'),
      td(i.startUs === null ? '-' : isoMicros(i.startUs), 'mono'),
      tdList(i.notes),
      '</tr>',
    ].join(''),
  );
  const head: (string | [string, 'num'])[] = [...(multiple ? [['Input', 'num'] as [string, 'num']] : []), 'File', 'Format', ['Packets', 'num'], ['Bytes', 'num'], 'Kafka ports', 'First packet', 'Notes'];
  return table('inputs-table', head, rows);
}

function findingsSection(report: Report): string {
  const multiple = report.inputs.length > 1;
  const shown = report.findings.slice(0, MAX_TABLE_ROWS);
  if (report.findings.length === 0) return `<p>No findings.</p>${notListedFindings(report)}`;
  const rules = [...new Set(report.findings.map((f) => f.rule))].sort();
  const severities = (['error', 'warning', 'info'] as const).filter((s) => report.findings.some((f) => f.severity === s));
  const rows = shown.map((f: Finding) => {
    const frame = f.frame === null ? '-' : multiple ? `${f.input + 1}:${f.frame}` : String(f.frame);
    // data-label: the column's name, shown before the value where a phone lays each finding out as a card.
    const cell = (label: string, text: string, cls: string, sort?: string | number) => td(text, cls, sort).replace('<td', `<td data-label="${label}"`);
    return [
      `<tr data-rule="${esc(f.rule)}" data-severity="${f.severity}">`,
      `<td class="sev sev-${f.severity}" data-sort="${2 - SEVERITY_RANK[f.severity]}">${esc(f.severity)}</td>`,
      cell('Rule', f.rule, 'mono'),
      cell('Frame', frame, 'num', f.input * 1e10 + (f.frame ?? 0)),
      cell('Client -> Broker', f.client === null ? '-' : `${f.client} -> ${f.broker}`, 'mono'),
      cell('API', f.apiKey === null ? '-' : apiLabel(f.apiKey, f.apiVersion ?? 0), ''),
      cell('Corr', f.correlationId === null ? '-' : String(f.correlationId), 'num', f.correlationId ?? -1),
      td(f.message, 'msg'),
      '</tr>',
    ].join('');
  });
  const controls =
    `<div class="controls"><label>Rule <select id="filter-rule"><option value="">all rules</option>${rules.map((r) => `<option value="${esc(r)}">${esc(r)}</option>`).join('')}</select></label>` +
    `<label>Severity <select id="filter-severity"><option value="">all severities</option>${severities.map((s) => `<option value="${s}">${s}</option>`).join('')}</select></label>` +
    `<span id="findings-shown" class="muted" aria-live="polite"></span></div>`;
  return (
    controls +
    table('findings-table', ['Severity', 'Rule', ['Frame', 'num'], 'Client -> Broker', 'API', ['Corr', 'num'], 'Message'], rows) +
    (report.findings.some((f) => f.frame !== null) ? `<p class="muted">A finding's message, field by field with its bytes: <code>kcid show ${multiple ? 'CAPTURE... INPUT:FRAME' : 'CAPTURE FRAME'}</code></p>` : '') +
    capNote(shown.length, report.findings.length, 'findings') +
    notListedFindings(report)
  );
}

function notListedFindings(report: Report): string {
  const n = report.notListed?.findings ?? 0;
  return n > 0 ? `<p class="note">${esc(plural(n, 'more finding'))} counted but not listed (--max-findings; see the inputs' notes).</p>` : '';
}

function timelineSection(report: Report): string {
  const range = timeRange(report);
  if (range === null) return '<p>No Kafka connection to draw.</p>';
  const t = renderTimeline(report, range);
  const notes: string[] = [];
  if (t.othersInstances > 0) notes.push(`The busiest ${count(t.ownLanes)} instances have a lane each; the other ${count(t.othersInstances)} share the lane "${count(t.othersInstances)} more instances".`);
  if (t.barsNotDrawn > 0) notes.push(`${plural(t.barsNotDrawn, 'connection')} beyond ${count(MAX_BARS_PER_LANE)} per lane are not drawn as bars.`);
  if (t.ticksNotDrawn > 0) notes.push(`${plural(t.ticks, 'request')} are drawn as ticks; ${count(t.ticksNotDrawn)} more are counted in the rates below but not drawn (beyond 20,000 requests per input the ticks are a sample spread over the capture, errors first; at most 200 per connection).`);
  if (t.markerGroups > 0) notes.push(`${plural(t.markers, 'finding')} are drawn as ${plural(t.markerGroups, 'mark')}, one per row, severity and ${count(6)} pixels of time (beyond ${count(MAX_MARKERS)} findings); hover a mark for its count, click it for the findings table.`);
  if (!report.inputs.some((i) => i.activity !== undefined)) notes.push('The summaries this page was made from hold no request times (made by an older kcid): requests are not drawn.');
  return (
    `<p class="note">From ${esc(isoMicros(range.startUs))} to ${esc(isoMicros(range.endUs))}. Hover or focus a mark for its frame, API and correlation ID.</p>` +
    `<div class="legend"><span><i class="l-conn"></i>connection</span><span><i class="l-ok"></i>request, no error</span><span><i class="l-err"></i>error response</span><span><i class="l-none"></i>no response seen</span><span><i class="l-error"></i>error finding</span><span><i class="l-warning"></i>warning</span><span><i class="l-info"></i>note</span></div>` +
    `<div class="scroll">${t.svg}</div>` +
    notes.map((n) => `<p class="note">${esc(n)}</p>`).join('')
  );
}

function ratesSection(report: Report): string {
  const r = rates(report);
  const range = timeRange(report);
  if (r === null || range === null) return '<p>No requests with times to chart.</p>';
  const charted = r.brokers.reduce((n, b) => n + b.total, 0);
  const filtered =
    charted > report.counts.requests
      ? `<p class="note">${esc(`These charts count all ${count(charted)} requests of the inputs; the filters keep ${count(report.counts.requests)} of them in the rest of the page.`)}</p>`
      : '';
  const note = filtered + (r.summedBrokers > 0 ? `<p class="note">${esc(`The busiest ${count(r.brokers.length - 1)} brokers have a chart each; the other ${count(r.summedBrokers)} are summed in the last.`)}</p>` : '');
  return (
    `<p class="note">Requests per second (by request time) and error responses per second, in columns of ${esc(durationText(r.columnUs))}.</p>` +
    `<div class="legend"><span><i class="l-req"></i>requests/s</span><span><i class="l-err"></i>error responses/s</span></div>` +
    renderRates(r, range) +
    note
  );
}

function durationText(us: number): string {
  return us >= 1_000_000 ? `${Number((us / 1_000_000).toPrecision(4))} s` : `${Number((us / 1000).toPrecision(4))} ms`;
}

function latencySection(report: Report): string {
  const apis = latencies(report);
  if (apis.length === 0) return '<p>No answered requests.</p>';
  const rows = apis.map((a) =>
    ['<tr>', td(apiName(a.apiKey)), td(count(a.responses), 'num', a.responses), td(percentileText(a.p50, a.exact), 'num', a.p50 ?? -1), td(percentileText(a.p99, a.exact), 'num', a.p99 ?? -1), '</tr>'].join(''),
  );
  return (
    `<p class="note">Time from request to response, on a logarithmic axis; green line p50, red line p99: exact latencies, or marked ≈ when they are bucket bounds (within 5%).</p>` +
    renderLatency(apis) +
    table('latency-table', ['API', ['Responses', 'num'], ['p50 ms', 'num'], ['p99 ms', 'num']], rows)
  );
}

function instancesSection(report: Report): string {
  const shown = report.instances.slice(0, MAX_TABLE_ROWS);
  const rows = shown.map((inst) => {
    const { p50Ms: p50, p99Ms: p99, exact } = latencyPercentiles(inst.connections);
    return [
      '<tr>',
      td(inst.clientInstanceId ?? '(none)', 'id'),
      td(inst.source),
      tdList(inst.clientIds),
      tdList(inst.software.map((s) => `${s.name} ${s.version}`)),
      tdList(inst.clientAddresses),
      tdList(inst.brokers),
      td(count(inst.connections.length), 'num', inst.connections.length),
      td(count(inst.requests), 'num', inst.requests),
      td(count(inst.errorResponses), 'num', inst.errorResponses),
      td(percentileText(p50, exact), 'num', p50 ?? -1),
      td(percentileText(p99, exact), 'num', p99 ?? -1),
      td(isoMicros(inst.firstUs), 'mono'),
      td(isoMicros(inst.lastUs), 'mono'),
      '</tr>',
    ].join('');
  });
  if (rows.length === 0) return '<p>No client instances.</p>';
  const head: (string | [string, 'num'])[] = ['Client instance ID', 'Source', 'ClientId', 'Software', 'Hosts', 'Brokers', ['Conns', 'num'], ['Requests', 'num'], ['Errors', 'num'], ['p50 ms', 'num'], ['p99 ms', 'num'], 'First seen', 'Last seen'];
  return table('instances-table', head, rows) + capNote(shown.length, report.instances.length, 'instances');
}

function connectionsSection(report: Report): string {
  const multiple = report.inputs.length > 1;
  const owner = new Map<object, string>();
  for (const inst of report.instances) for (const c of inst.connections) owner.set(c, inst.clientInstanceId ?? '(none)');
  const shown = report.connections.slice(0, MAX_TABLE_ROWS);
  const rows = shown.map((c) =>
    [
      '<tr>',
      multiple ? td(String(c.input + 1), 'num') : '',
      td(c.client, 'mono'),
      td(c.broker, 'mono'),
      td(owner.get(c) ?? '-', 'id'),
      tdList(c.clientIds),
      td(isoMicros(c.firstUs), 'mono'),
      td(isoMicros(c.lastUs), 'mono'),
      td(c.startSeen ? 'yes' : 'no'),
      td(count(c.requests), 'num', c.requests),
      td(count(c.responses), 'num', c.responses),
      td(count(c.errorResponses), 'num', c.errorResponses),
      td(count(c.gaps), 'num', c.gaps),
      '</tr>',
    ].join(''),
  );
  if (rows.length === 0) return '<p>No Kafka connections.</p>';
  const head: (string | [string, 'num'])[] = [
    ...(multiple ? [['Input', 'num'] as [string, 'num']] : []),
    'Client',
    'Broker',
    'Client instance',
    'ClientId',
    'First packet',
    'Last packet',
    'Start seen',
    ['Requests', 'num'],
    ['Responses', 'num'],
    ['Errors', 'num'],
    ['Gaps', 'num'],
  ];
  const unlisted = report.notListed?.connections ?? 0;
  return (
    table('connections-table', head, rows) +
    capNote(shown.length, report.connections.length, 'connections') +
    (unlisted > 0 ? `<p class="note">${esc(plural(unlisted, 'more connection'))} counted but not listed (--max-connection-summaries).</p>` : '')
  );
}

/**
 * Telemetry per instance: the GetTelemetrySubscriptions and PushTelemetry requests each instance
 * sent, and when it pushed (from the ticks kept). TELEMETRY HOOK: decoded PushTelemetry metrics
 * (issue 15) are not in the report data yet; when they are, {@link telemetryMetrics} renders them
 * here, below this table.
 */
function telemetrySection(report: Report): string {
  const pushTimes = new Map<object, number[]>();
  const byConn = new Map<string, object>();
  for (const c of report.connections) byConn.set(`${c.input}/${c.id}`, c);
  for (const [input, i] of report.inputs.entries()) {
    for (const t of i.activity?.ticks ?? []) {
      if (t[3] !== API.PushTelemetry) continue;
      const c = byConn.get(`${input}/${t[0]}`);
      if (c === undefined) continue;
      const list = pushTimes.get(c);
      if (list === undefined) pushTimes.set(c, [t[2]]);
      else list.push(t[2]);
    }
  }
  const rows: string[] = [];
  for (const inst of report.instances) {
    const subs = inst.apis.get(API.GetTelemetrySubscriptions) ?? 0;
    const pushes = inst.apis.get(API.PushTelemetry) ?? 0;
    if (subs === 0 && pushes === 0) continue;
    const times = inst.connections.flatMap((c) => pushTimes.get(c) ?? []).sort((a, b) => a - b);
    const interval = times.length >= 2 ? medianGap(times) : null;
    rows.push(
      [
        '<tr>',
        td(inst.clientInstanceId ?? '(none)', 'id'),
        td(inst.source),
        tdList(inst.clientIds),
        td(count(subs), 'num', subs),
        td(count(pushes), 'num', pushes),
        td(times.length === 0 ? '-' : isoMicros(times[0]!), 'mono'),
        td(times.length === 0 ? '-' : isoMicros(times[times.length - 1]!), 'mono'),
        td(interval === null ? '-' : String(interval / 1000), 'num', interval ?? -1),
        '</tr>',
      ].join(''),
    );
  }
  if (rows.length === 0) return '<p>No instance sent KIP-714 telemetry requests.</p>' + telemetryMetrics(report);
  return (
    table(
      'telemetry-table',
      ['Client instance ID', 'Source', 'ClientId', ['GetTelemetrySubscriptions', 'num'], ['PushTelemetry', 'num'], 'First push', 'Last push', ['Median interval ms', 'num']],
      rows,
    ) +
    '<p class="note">Push times are those of the requests kept as ticks (all of them in a capture of up to 20,000 requests).</p>' +
    telemetryMetrics(report)
  );
}

function medianGap(times: readonly number[]): number {
  const gaps = times.slice(1).map((t, i) => t - times[i]!).sort((a, b) => a - b);
  return gaps[Math.floor((gaps.length - 1) / 2)]!;
}

/**
 * TELEMETRY HOOK (issue 15): decoded PushTelemetry metrics per instance, when the report carries
 * them. Until the decoder lands the report has no such data and this renders nothing.
 */
export function telemetryMetrics(report: Report): string {
  const decoded = (report as { telemetry?: unknown }).telemetry;
  if (decoded === undefined) return '';
  return '<p class="note">This report carries decoded telemetry metrics, which this version of the page does not draw yet.</p>';
}

export function renderHtml(report: Report, opts: HtmlOptions = {}): string {
  const c = report.counts.findings;
  const title = `kcid: ${plural(report.counts.instances, 'client instance')}, ${plural(c.error, 'error')}, ${plural(c.warning, 'warning')}`;
  const section = (id: string, heading: string, body: string) => `<section id="${id}"><h2>${esc(heading)}</h2>\n${body}\n</section>`;
  return [
    '<!DOCTYPE html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${esc(CSP)}">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="referrer" content="no-referrer">',
    `<title>${esc(title)}</title>`,
    `<style>${STYLE}</style>`,
    '</head>',
    '<body>',
    '<header>',
    '<h1>kcid report</h1>',
    `<p class="summary" id="summary">${esc(summaryLine(report))}</p>`,
    '</header>',
    section('inputs', 'Inputs', inputsSection(report)),
    section('findings', 'Findings', findingsSection(report)),
    section('timeline', 'Timeline by client instance', timelineSection(report)),
    section('rates', 'Requests and errors per broker', ratesSection(report)),
    section('latency', 'Latency by API', latencySection(report)),
    section('instances', 'Client instances', instancesSection(report)),
    section('connections', 'Connections', connectionsSection(report)),
    section('telemetry', 'Telemetry per instance', telemetrySection(report)),
    `<footer><p class="note">Made by kcid${opts.version === undefined ? '' : ` ${esc(opts.version)}`}${report.config === undefined ? '' : `, rule settings from ${esc(report.config)}`}. Times are UTC. The page needs no network; its script only sorts, filters and shows tooltips.</p></footer>`,
    '<div id="tip" role="tooltip"></div>',
    `<script>${SCRIPT}</script>`,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}
