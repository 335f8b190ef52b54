/**
 * Request and error rates per broker over time, and latency by API, as SVG. Both are drawn from
 * every input's activity (analysis/activity.ts), merged: bucket widths are 1 ms times powers of
 * two on a common origin (the epoch), so buckets of different inputs add up exactly, and the
 * page widens them until at most MAX_COLUMNS fill the range.
 */
import { apiPercentiles, bucketUpperUs, samplesByApi } from '../../analysis/latency.js';
import { percentileText } from '../clients.js';
import type { Report } from '../../analysis/report.js';
import { apiName } from '../../kafka/protocol.js';
import { isoMicros } from '../../base/time.js';
import { axis, scale, type TimeRange } from './timeline.js';
import { count, duration, esc, escLines, n2, plural } from './text.js';

/** Time columns per rate chart at most. */
export const MAX_COLUMNS = 150;
/** Brokers drawn in charts of their own; the rest are summed into one. */
export const MAX_BROKER_CHARTS = 16;

const WIDTH = 1000;
const LEFT = 60;
const RIGHT = 12;

export interface BrokerSeries {
  broker: string;
  /** Per column: requests, errors. */
  requests: number[];
  errors: number[];
  total: number;
}

export interface Rates {
  /** Width of a column, µs. */
  columnUs: number;
  /** Column 0 starts here (µs since the epoch). */
  firstUs: number;
  brokers: BrokerSeries[];
  /** Brokers summed into the last series. */
  summedBrokers: number;
}

/** Every input's buckets on one grid of at most MAX_COLUMNS columns. */
export function rates(report: Report): Rates | null {
  const inputs = report.inputs.flatMap((i) => (i.activity === undefined ? [] : [i.activity]));
  if (inputs.length === 0) return null;
  let width = Math.max(...inputs.map((a) => a.bucketUs));
  let lo = Infinity;
  let hi = -Infinity;
  const perBroker = new Map<string, Map<number, [number, number]>>();
  for (const a of inputs) {
    const k = width / a.bucketUs;
    for (const [broker, flat] of a.brokers) {
      let m = perBroker.get(broker);
      if (m === undefined) perBroker.set(broker, (m = new Map()));
      for (let i = 0; i < flat.length; i += 3) {
        const b = Math.floor(flat[i]! / k);
        lo = Math.min(lo, b);
        hi = Math.max(hi, b);
        const c = m.get(b);
        if (c === undefined) m.set(b, [flat[i + 1]!, flat[i + 2]!]);
        else {
          c[0] += flat[i + 1]!;
          c[1] += flat[i + 2]!;
        }
      }
    }
  }
  if (lo === Infinity) return null;
  let k = 1;
  while (Math.floor(hi / k) - Math.floor(lo / k) + 1 > MAX_COLUMNS) k *= 2;
  const first = Math.floor(lo / k);
  const columns = Math.floor(hi / k) - first + 1;
  const series: BrokerSeries[] = [];
  for (const [broker, m] of perBroker) {
    const requests = new Array<number>(columns).fill(0);
    const errors = new Array<number>(columns).fill(0);
    let total = 0;
    for (const [b, [r, e]] of m) {
      const col = Math.floor(b / k) - first;
      requests[col]! += r;
      errors[col]! += e;
      total += r;
    }
    series.push({ broker, requests, errors, total });
  }
  series.sort((a, b) => b.total - a.total || (a.broker < b.broker ? -1 : a.broker > b.broker ? 1 : 0));
  let summedBrokers = 0;
  if (series.length > MAX_BROKER_CHARTS) {
    const rest = series.splice(MAX_BROKER_CHARTS - 1);
    summedBrokers = rest.length;
    const sum: BrokerSeries = { broker: `${rest.length} more brokers`, requests: new Array<number>(columns).fill(0), errors: new Array<number>(columns).fill(0), total: 0 };
    for (const s of rest) {
      for (let i = 0; i < columns; i++) {
        sum.requests[i]! += s.requests[i]!;
        sum.errors[i]! += s.errors[i]!;
      }
      sum.total += s.total;
    }
    series.push(sum);
  }
  width *= k;
  return { columnUs: width, firstUs: first * width, brokers: series, summedBrokers };
}

/** A round number at least `v` (1, 2 or 5 times a power of ten), for an axis maximum. */
function roundUp(v: number): number {
  if (v <= 0) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(v)));
  return [1, 2, 5, 10].map((m) => m * p).find((s) => s >= v - 1e-9)!;
}

function rate(n: number, columnUs: number): string {
  const perSec = (n * 1_000_000) / columnUs;
  return perSec >= 100 ? count(Math.round(perSec)) : String(Number(perSec.toPrecision(3)));
}

/** One chart per broker: requests per second as bars, error responses per second in red over them. */
export function renderRates(r: Rates, range: TimeRange): string {
  const height = 110;
  const top = 22;
  const bottom = height - 8;
  // The charts share the timeline's range, widened to whole columns.
  const span: TimeRange = {
    startUs: Math.min(range.startUs, r.firstUs),
    endUs: Math.max(range.endUs, r.firstUs + r.brokers[0]!.requests.length * r.columnUs),
  };
  const x = scale(span, LEFT, WIDTH - RIGHT);
  const peak = Math.max(1, ...r.brokers.map((s) => Math.max(...s.requests)));
  const yMax = roundUp((peak * 1_000_000) / r.columnUs);
  const y = (n: number) => bottom - (((n * 1_000_000) / r.columnUs) / yMax) * (bottom - top);
  return r.brokers
    .map((s) => {
      const parts: string[] = [axis(span, x, top, bottom, 6)];
      parts.push(`<line class="grid" x1="${LEFT}" y1="${bottom}" x2="${WIDTH - RIGHT}" y2="${bottom}"/>`);
      parts.push(`<text x="${LEFT - 4}" y="${top + 9}" text-anchor="end">${esc(count(yMax))}/s</text><text x="${LEFT - 4}" y="${bottom}" text-anchor="end">0</text>`);
      for (let i = 0; i < s.requests.length; i++) {
        const n = s.requests[i]!;
        if (n === 0) continue;
        const e = s.errors[i]!;
        const t0 = r.firstUs + i * r.columnUs;
        const x1 = x(t0);
        const w = Math.max(1, x(t0 + r.columnUs) - x1 - 0.5);
        const tip = escLines(
          `${s.broker}\n${isoMicros(t0)} + ${duration(r.columnUs)}\n${plural(n, 'request')} (${rate(n, r.columnUs)}/s), ${plural(e, 'error response')} (${rate(e, r.columnUs)}/s)`,
        );
        parts.push(`<g tabindex="0"><title>${tip}</title><rect class="req" x="${n2(x1)}" y="${n2(y(n))}" width="${n2(w)}" height="${n2(bottom - y(n))}"/>`);
        if (e > 0) parts.push(`<rect class="errs" x="${n2(x1)}" y="${n2(y(e))}" width="${n2(w)}" height="${n2(Math.max(1, bottom - y(e)))}"/>`);
        parts.push('</g>');
      }
      return (
        `<h3>${esc(s.broker)} <span class="muted">${esc(plural(s.total, 'request'))}, ${esc(plural(s.errors.reduce((a, b) => a + b, 0), 'error response'))}</span></h3>` +
        `<div class="scroll"><svg class="rate wide" data-broker="${esc(s.broker)}" viewBox="0 0 ${WIDTH} ${height}" role="img" aria-label="${esc(`Requests and error responses per second at ${s.broker}`)}">${parts.join('')}</svg></div>`
      );
    })
    .join('\n');
}

export interface ApiLatency {
  apiKey: number;
  /** Flattened [bucket, count] (analysis/latency.ts), merged over every input. */
  histogram: number[];
  responses: number;
  p50: number | null;
  p99: number | null;
  /** p50 and p99 are latencies that happened: every response's latency was kept (analysis/latency.ts). */
  exact: boolean;
}

export function latencies(report: Report): ApiLatency[] {
  const byApi = new Map<number, Map<number, number>>();
  for (const input of report.inputs) {
    for (const [apiKey, flat] of input.activity?.latency ?? []) {
      let m = byApi.get(apiKey);
      if (m === undefined) byApi.set(apiKey, (m = new Map()));
      for (let i = 0; i < flat.length; i += 2) m.set(flat[i]!, (m.get(flat[i]!) ?? 0) + flat[i + 1]!);
    }
  }
  const samples = samplesByApi(report.connections);
  return [...byApi]
    .sort((a, b) => a[0] - b[0])
    .map(([apiKey, m]) => {
      const histogram = [...m].sort((a, b) => a[0] - b[0]).flat();
      let responses = 0;
      for (const n of m.values()) responses += n;
      const p = apiPercentiles(histogram, responses, samples.get(apiKey));
      return { apiKey, histogram, responses, p50: p.p50Ms, p99: p.p99Ms, exact: p.exact };
    });
}

/** One row per API: its latency distribution on a shared logarithmic axis, p50 and p99 marked. */
export function renderLatency(apis: readonly ApiLatency[]): string {
  if (apis.length === 0) return '';
  const rowH = 26;
  const top = 20;
  const left = 330;
  let lo = Infinity;
  let hi = -Infinity;
  for (const a of apis) {
    lo = Math.min(lo, a.histogram[0]!);
    hi = Math.max(hi, a.histogram[a.histogram.length - 2]!);
  }
  // Axis in log10 of µs, from the lowest bucket's lower bound to the highest's upper bound.
  const lgLo = Math.floor(Math.log10(Math.max(1, bucketUpperUs(Math.max(0, lo - 1)))));
  // At most 16 decades (1 µs to 317 years): summaries are checked, this keeps the axis finite whatever.
  const lgHi = Math.min(lgLo + 16, Math.max(lgLo + 1, Math.ceil(Math.log10(bucketUpperUs(hi)))));
  const x = (us: number) => left + ((Math.log10(Math.max(1, us)) - lgLo) / (lgHi - lgLo)) * (WIDTH - RIGHT - left);
  const height = top + apis.length * rowH + 4;
  const parts: string[] = [];
  for (let e = lgLo; e <= lgHi; e++) {
    const px = n2(x(Math.pow(10, e)));
    parts.push(`<line class="grid" x1="${px}" y1="${top}" x2="${px}" y2="${height - 4}"/><text x="${px}" y="${top - 6}" text-anchor="middle">${esc(duration(Math.pow(10, e)))}</text>`);
  }
  apis.forEach((a, i) => {
    const y0 = top + i * rowH;
    const name = apiName(a.apiKey);
    parts.push(`<text class="lane-label" x="4" y="${y0 + 16}">${esc(name)}</text>`);
    const p50 = percentileText(a.p50, a.exact);
    const p99 = percentileText(a.p99, a.exact);
    parts.push(`<text x="${left - 8}" y="${y0 + 16}" text-anchor="end">p50 ${esc(a.p50 === null ? '-' : `${p50} ms`)} · p99 ${esc(a.p99 === null ? '-' : `${p99} ms`)}</text>`);
    let peak = 0;
    for (let j = 1; j < a.histogram.length; j += 2) peak = Math.max(peak, a.histogram[j]!);
    const g: string[] = [];
    for (let j = 0; j < a.histogram.length; j += 2) {
      const b = a.histogram[j]!;
      const n = a.histogram[j + 1]!;
      const x1 = x(b === 0 ? 1 : bucketUpperUs(b - 1));
      const x2 = x(bucketUpperUs(b));
      const h = Math.max(1, (n / peak) * (rowH - 6));
      g.push(`<rect class="lat" x="${n2(x1)}" y="${n2(y0 + rowH - 3 - h)}" width="${n2(Math.max(1, x2 - x1))}" height="${n2(h)}"/>`);
    }
    const tip = esc(`${name}: ${plural(a.responses, 'response')}, p50 ${p50} ms, p99 ${p99} ms`);
    parts.push(`<g class="api-latency" tabindex="0"><title>${tip}</title><rect class="band" x="${left}" y="${y0 + 2}" width="${WIDTH - RIGHT - left}" height="${rowH - 4}"/>${g.join('')}`);
    for (const [cls, v] of [['p50', a.p50], ['p99', a.p99]] as const) {
      if (v === null) continue;
      const px = n2(x(v * 1000));
      parts.push(`<line class="${cls}" x1="${px}" y1="${y0 + 2}" x2="${px}" y2="${y0 + rowH - 2}"/>`);
    }
    parts.push('</g>');
  });
  return `<div class="scroll"><svg id="latency" class="wide" viewBox="0 0 ${WIDTH} ${height}" role="img" aria-label="Latency by API">${parts.join('')}</svg></div>`;
}
