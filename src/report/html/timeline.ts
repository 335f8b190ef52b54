/**
 * The per-instance timeline: one lane per client instance (the busiest MAX_LANES; the rest share
 * one lane), one row per broker in a lane, each connection a bar from its first to its last
 * packet, each request kept as a tick (see analysis/activity.ts) coloured by its response's error
 * code, and each finding a diamond on its connection's row. Every mark has a <title>: the
 * browser's own tooltip (scripts off too), which the page's script also shows on keyboard focus.
 */
import type { InstanceModel } from '../../analysis/instances.js';
import type { Report } from '../../analysis/report.js';
import type { ConnectionSummary, Finding } from '../../analysis/types.js';
import { apiLabel, errorLabel } from '../../kafka/protocol.js';
import { isoMicros } from '../../base/time.js';
import { clip, count, duration, esc, escLines, n2, plural } from './text.js';

/** Instances drawn in lanes of their own; the rest share one. */
export const MAX_LANES = 40;
/** Connections drawn as bars per lane, and ticks drawn on the whole page. */
export const MAX_BARS_PER_LANE = 400;
export const MAX_PAGE_TICKS = 20_000;
/**
 * Findings drawn as a mark each; past this, findings are grouped per row, MARKER_COLUMN pixels of
 * time and severity into one mark with their count (the page stays a few MB: 100,000 findings as
 * single marks made 44.6 MB).
 */
export const MAX_MARKERS = 2_000;
const MARKER_COLUMN = 6;
/** Severities in drawing order: what is drawn later is on top. */
const DRAW_ORDER = ['info', 'warning', 'error'] as const;

const WIDTH = 1000;
const LABEL = 190;
const RIGHT = 12;
const ROW = 13;
const LANE_HEAD = 15;
const LANE_GAP = 7;
const AXIS = 22;

export interface TimeRange {
  startUs: number;
  endUs: number;
}

/** The span every chart shares: first to last packet of the listed connections, and the findings' times. */
export function timeRange(report: Report): TimeRange | null {
  let lo = Infinity;
  let hi = -Infinity;
  for (const c of report.connections) {
    lo = Math.min(lo, c.firstUs);
    hi = Math.max(hi, c.lastUs);
  }
  for (const f of report.findings) {
    if (f.timeUs === null) continue;
    lo = Math.min(lo, f.timeUs);
    hi = Math.max(hi, f.timeUs);
  }
  return lo === Infinity ? null : { startUs: lo, endUs: hi };
}

/** An x position for time `us`. */
export function scale(range: TimeRange, left: number, right: number): (us: number) => number {
  const span = Math.max(1, range.endUs - range.startUs);
  return (us) => left + ((us - range.startUs) / span) * (right - left);
}

/** About `n` round steps over the range, labelled as offsets from its start. */
export function axisTicks(range: TimeRange, n: number): number[] {
  const span = Math.max(1, range.endUs - range.startUs);
  const raw = span / n;
  const p = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw)!;
  const out: number[] = [];
  // Bounded even for a summary file whose times make no sense (an infinite or NaN span).
  if (!Number.isFinite(step) || step <= 0) return [0];
  for (let t = 0; t <= span + 1e-9 && out.length <= 2 * n + 2; t += step) out.push(t);
  return out;
}

export function axis(range: TimeRange, x: (us: number) => number, top: number, bottom: number, n: number): string {
  let s = '';
  const right = x(range.endUs);
  for (const off of axisTicks(range, n)) {
    const at = x(range.startUs + off);
    const px = n2(at);
    // A label at the right edge ends there rather than running off the chart.
    const anchor = at > right - 25 ? 'end' : 'middle';
    s += `<line class="grid" x1="${px}" y1="${top}" x2="${px}" y2="${bottom}"/><text x="${px}" y="${top - 6}" text-anchor="${anchor}">${off === 0 ? '0' : `+${esc(duration(off))}`}</text>`;
  }
  return s;
}

interface Lane {
  kind: 'instance' | 'others' | 'unassigned';
  label: string;
  title: string;
  connections: ConnectionSummary[];
  /** Brokers in row order. */
  rows: string[];
  id: string | null;
}

export interface TimelineResult {
  svg: string;
  /** What the timeline drew, for the notes under it. */
  lanes: number;
  /** Instances with a lane of their own. */
  ownLanes: number;
  ticks: number;
  ticksNotDrawn: number;
  /** Findings drawn (one mark each, or counted in a group's mark). */
  markers: number;
  /** Marks standing for several findings each (0 up to MAX_MARKERS findings). */
  markerGroups: number;
  barsNotDrawn: number;
  othersInstances: number;
}

const connKey = (input: number, id: number) => `${input}/${id}`;

function instanceLabel(inst: InstanceModel): string {
  const id = inst.clientInstanceId ?? '(no ID)';
  const name = inst.clientIds[0];
  return name === undefined ? id : `${id} · ${name}`;
}

function laneOf(kind: Lane['kind'], label: string, title: string, id: string | null, connections: ConnectionSummary[]): Lane {
  const rows = [...new Set(connections.map((c) => c.broker))].sort();
  return { kind, label, title, id, connections, rows };
}

export function lanes(report: Report): { lanes: Lane[]; others: number } {
  const ranked = report.instances.map((inst, i) => ({ inst, i })).sort((a, b) => b.inst.requests - a.inst.requests || a.i - b.i);
  const own = ranked.length <= MAX_LANES ? ranked : ranked.slice(0, MAX_LANES - 1);
  const rest = ranked.length <= MAX_LANES ? [] : ranked.slice(MAX_LANES - 1);
  // Lanes in the instances' own order (first seen), the busiest kept.
  own.sort((a, b) => a.i - b.i);
  const out: Lane[] = own.map(({ inst }) =>
    laneOf(
      'instance',
      instanceLabel(inst),
      `${inst.clientInstanceId ?? '(no ID)'} (${inst.source}); ClientIds: ${inst.clientIds.join(', ') || '-'}; ${plural(inst.connections.length, 'connection')}, ${plural(inst.requests, 'request')}`,
      inst.clientInstanceId,
      inst.connections,
    ),
  );
  if (rest.length > 0) {
    const conns = rest.flatMap((r) => r.inst.connections);
    const requests = rest.reduce((n, r) => n + r.inst.requests, 0);
    out.push(laneOf('others', `${count(rest.length)} more instances`, `${plural(rest.length, 'instance')} with fewer requests, together: ${plural(conns.length, 'connection')}, ${plural(requests, 'request')}`, null, conns));
  }
  // Connections that sent no request (TLS, or bytes kcid could not frame) belong to no instance.
  const grouped = new Set(report.instances.flatMap((i) => i.connections));
  const loose = report.connections.filter((c) => !grouped.has(c));
  if (loose.length > 0) {
    out.push(laneOf('unassigned', 'no request seen', `${plural(loose.length, 'connection')} without a Kafka request (TLS, or bytes that could not be framed)`, null, loose));
  }
  return { lanes: out, others: rest.length };
}

function tickTip(t: readonly (number | null)[], c: ConnectionSummary, multipleInputs: boolean): string {
  const [, frame, us, apiKey, apiVersion, corr, errorCode, latencyUs] = t as number[];
  const where = multipleInputs ? `input ${c.input + 1} frame ${frame}` : `frame ${frame}`;
  const answer =
    latencyUs === null
      ? 'no response seen'
      : `${errorCode === null ? 'error code not decoded' : errorCode === 0 ? 'no error' : `error ${errorLabel(errorCode!)}`}, ${duration(latencyUs!)}`;
  return `${where} · ${apiLabel(apiKey!, apiVersion!)} · corr ${corr}\n${c.client} -> ${c.broker}\n${isoMicros(us!)} · ${answer}`;
}

function findingTip(f: Finding, multipleInputs: boolean): string {
  const where = f.frame === null ? '' : multipleInputs ? `input ${f.input + 1} frame ${f.frame} · ` : `frame ${f.frame} · `;
  const api = f.apiKey === null ? '' : ` · ${apiLabel(f.apiKey, f.apiVersion ?? 0)} · corr ${f.correlationId}`;
  return `${f.severity} ${f.rule}${api}\n${where}${f.client} -> ${f.broker}\n${f.message}`;
}

/** A mark with its tooltip: a <title>, which the browser shows on hover and the page's script on hover and focus. */
export function tipped(tag: string, attrs: string, tip: string): string {
  return `<${tag} ${attrs} tabindex="0"><title>${escLines(tip)}</title></${tag}>`;
}

export function renderTimeline(report: Report, range: TimeRange): TimelineResult {
  const { lanes: all, others } = lanes(report);
  const multipleInputs = report.inputs.length > 1;
  const x = scale(range, LABEL, WIDTH - RIGHT);
  // Where each listed connection is drawn: its lane and row.
  const place = new Map<string, { lane: number; row: number; c: ConnectionSummary }>();
  const byAddress = new Map<string, ConnectionSummary[]>();
  all.forEach((lane, li) => {
    for (const c of lane.connections) {
      place.set(connKey(c.input, c.id), { lane: li, row: lane.rows.indexOf(c.broker), c });
      const k = `${c.input}\u0000${c.client}\u0000${c.broker}`;
      const list = byAddress.get(k);
      if (list === undefined) byAddress.set(k, [c]);
      else list.push(c);
    }
  });
  const top: number[] = [];
  let y = AXIS;
  for (const lane of all) {
    top.push(y);
    y += LANE_HEAD + lane.rows.length * ROW + LANE_GAP;
  }
  const height = y;
  const rowY = (lane: number, row: number) => top[lane]! + LANE_HEAD + row * ROW;
  const parts: string[] = [];
  parts.push(axis(range, x, AXIS, height - LANE_GAP, 6));
  let barsNotDrawn = 0;
  all.forEach((lane, li) => {
    const t0 = top[li]!;
    const h = LANE_HEAD + lane.rows.length * ROW;
    const idAttr = lane.id === null ? '' : ` data-instance="${esc(lane.id)}"`;
    parts.push(`<g class="lane" data-kind="${lane.kind}"${idAttr}>`);
    parts.push(`<rect class="band" x="0" y="${t0}" width="${WIDTH}" height="${h}"/>`);
    parts.push(`<text class="lane-label" x="4" y="${t0 + 11}"><title>${esc(lane.title)}</title>${esc(clip(lane.label, 60))}</text>`);
    lane.rows.forEach((broker, ri) => {
      parts.push(`<text x="${LABEL - 6}" y="${rowY(li, ri) + 9}" text-anchor="end">${esc(clip(broker, 30))}</text>`);
    });
    let bars = 0;
    for (const c of lane.connections) {
      if (bars >= MAX_BARS_PER_LANE) {
        barsNotDrawn++;
        continue;
      }
      bars++;
      const ry = rowY(li, lane.rows.indexOf(c.broker));
      const x1 = x(c.firstUs);
      const w = Math.max(2, x(c.lastUs) - x1);
      const tip = `${c.client} -> ${c.broker}${multipleInputs ? ` (input ${c.input + 1})` : ''}\n${isoMicros(c.firstUs)} to ${isoMicros(c.lastUs)} (${duration(c.lastUs - c.firstUs)})\n${plural(c.requests, 'request')}, ${plural(c.errorResponses, 'error response')}${c.gaps > 0 ? `, ${plural(c.gaps, 'gap')}` : ''}`;
      parts.push(tipped('rect', `class="conn" x="${n2(x1)}" y="${ry + 2}" width="${n2(w)}" height="${ROW - 4}"`, tip));
    }
    parts.push('</g>');
  });
  // Ticks, in request order within each input.
  let ticks = 0;
  let ticksNotDrawn = 0;
  const tickParts: string[] = [];
  for (const input of report.inputs.keys()) {
    const activity = report.inputs[input]!.activity;
    if (activity === undefined) continue;
    ticksNotDrawn += activity.ticksNotKept;
    for (const t of activity.ticks) {
      const p = place.get(connKey(input, t[0]));
      if (p === undefined) continue; // a connection the filters or the listing cap left out
      if (ticks >= MAX_PAGE_TICKS) {
        ticksNotDrawn++;
        continue;
      }
      ticks++;
      const kind = t[7] === null ? 'tick none' : t[6] !== null && t[6] !== 0 ? 'tick err' : 'tick';
      tickParts.push(tipped('rect', `class="${kind}" x="${n2(x(t[2]) - 0.75)}" y="${rowY(p.lane, p.row) + 1}" width="1.5" height="${ROW - 2}"`, tickTip(t, p.c, multipleInputs)));
    }
  }
  parts.push(`<g class="ticks">${tickParts.join('')}</g>`);
  // Findings as diamonds on their connection's row, notes first and errors last so that an error
  // is drawn over a warning, and a warning over a note, at the same place.
  const placed: { f: Finding; cx: number; cy: number }[] = [];
  for (const f of report.findings) {
    if (f.timeUs === null || f.client === null || f.broker === null) continue;
    const candidates = byAddress.get(`${f.input}\u0000${f.client}\u0000${f.broker}`);
    if (candidates === undefined) continue;
    const c = candidates.find((k) => k.firstUs <= f.timeUs! && f.timeUs! <= k.lastUs) ?? candidates[0]!;
    const p = place.get(connKey(c.input, c.id))!;
    placed.push({ f, cx: x(f.timeUs), cy: rowY(p.lane, p.row) + ROW / 2 });
  }
  const markerParts: string[] = [];
  const diamond = (cx: number, cy: number, r: number) => `d="M${n2(cx)} ${n2(cy - r)}l${r} ${r}l${-r} ${r}l${-r} ${-r}z"`;
  let markers = 0;
  let markerGroups = 0;
  if (placed.length <= MAX_MARKERS) {
    for (const sev of DRAW_ORDER) {
      for (const { f, cx, cy } of placed) {
        if (f.severity !== sev) continue;
        markers++;
        markerParts.push(tipped('path', `class="marker marker-${f.severity}" data-rule="${esc(f.rule)}" ${diamond(cx, cy, 4.5)}`, findingTip(f, multipleInputs)));
      }
    }
  } else {
    // Past MAX_MARKERS, one mark per row, MARKER_COLUMN pixels of time and severity, with its count;
    // a click leads to the findings table (and its rule filter), which lists them.
    const groups = new Map<string, { cx: number; cy: number; severity: Finding['severity']; n: number; rules: Map<string, number>; first: Finding; last: Finding }>();
    for (const { f, cx, cy } of placed) {
      const column = Math.floor(cx / MARKER_COLUMN);
      const key = `${cy}/${column}/${f.severity}`;
      const g = groups.get(key);
      if (g === undefined) groups.set(key, { cx: (column + 0.5) * MARKER_COLUMN, cy, severity: f.severity, n: 1, rules: new Map([[f.rule, 1]]), first: f, last: f });
      else {
        g.n++;
        g.rules.set(f.rule, (g.rules.get(f.rule) ?? 0) + 1);
        if (f.timeUs! < g.first.timeUs!) g.first = f;
        if (f.timeUs! > g.last.timeUs!) g.last = f;
      }
    }
    for (const sev of DRAW_ORDER) {
      for (const g of groups.values()) {
        if (g.severity !== sev) continue;
        markerGroups++;
        markers += g.n;
        const rules = [...g.rules].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
        const shown = rules.slice(0, 5).map(([rule, n]) => `${rule} ×${count(n)}`);
        if (rules.length > 5) shown.push(`${plural(rules.length - 5, 'more rule')}`);
        const word = g.severity === 'info' ? 'note' : g.severity;
        const tip = `${plural(g.n, word)} here, ${isoMicros(g.first.timeUs!)} to ${isoMicros(g.last.timeUs!)}\n${g.first.client} -> ${g.first.broker}\n${shown.join(', ')}\n(click: the findings table lists them)`;
        markerParts.push(`<a href="#findings">${tipped('path', `class="marker marker-${g.severity} marker-group" data-count="${g.n}" ${diamond(g.cx, g.cy, 5.5)}`, tip)}</a>`);
      }
    }
  }
  parts.push(`<g class="markers">${markerParts.join('')}</g>`);
  const svg = `<svg id="timeline" class="wide" viewBox="0 0 ${WIDTH} ${height}" role="img" aria-label="Timeline: one lane per client instance, connections per broker, requests and findings">${parts.join('')}</svg>`;
  return { svg, lanes: all.length, ownLanes: all.filter((l) => l.kind === 'instance').length, ticks, ticksNotDrawn, markers, markerGroups, barsNotDrawn, othersInstances: others };
}
