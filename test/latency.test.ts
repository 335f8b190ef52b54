/**
 * Latency percentiles: exact while every latency is kept (up to 10,000 per instance and API, within
 * the capture's budget), bucket bounds marked ≈ past that; kept through summary files and merge.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  apiPercentiles,
  EXACT_BUDGET,
  histogramOf,
  latencyBucket,
  LatencyKeeper,
  latencyPercentiles,
  MAX_EXACT_PER_API,
  sortedPairs,
  type LatencyState,
} from '../src/analysis/latency.js';
import { ConnState } from '../src/analysis/connection-state.js';
import { percentileText } from '../src/report/clients.js';
import { Scenario } from './builder/scenario.js';
import { apiVersionsRequestBody, apiVersionsResponseBody } from './builder/kafka.js';
import { tmpDir } from './builder/capture.js';
import { ID_A, NO_TSHARK, onPath, runKcid, skipUnless } from './helpers.js';
import { join } from 'node:path';

/** A connection's latencies as a summary keeps them: all of them exactly. */
const exactly = (...pairs: number[]) => ({ latency: [], latencyUs: sortedPairs(pairs) });

describe('latency percentiles', () => {
  it('one request of 28.415 ms has p50 = p99 = 28.415 ms, exactly', () => {
    expect(latencyPercentiles([exactly(3, 28_415)])).toEqual({ p50Ms: 28.415, p99Ms: 28.415, exact: true });
    expect(percentileText(28.415, true)).toBe('28.415');
  });

  it('are nearest-rank: the smallest latency with at least p% at or below it', () => {
    // 1..100 ms: p50 is the 50th, p99 the 99th.
    const pairs = Array.from({ length: 100 }, (_, i) => [18, (100 - i) * 1000]).flat();
    expect(latencyPercentiles([exactly(...pairs)])).toEqual({ p50Ms: 50, p99Ms: 99, exact: true });
    // Four latencies: rank ceil(0.5 * 4) = 2 and ceil(0.99 * 4) = 4.
    expect(latencyPercentiles([exactly(0, 4, 0, 1, 3, 3, 0, 2)])).toEqual({ p50Ms: 0.002, p99Ms: 0.004, exact: true });
    // Across connections of one instance.
    expect(latencyPercentiles([exactly(0, 1000), exactly(0, 3000, 0, 2000)])).toEqual({ p50Ms: 2, p99Ms: 3, exact: true });
  });

  it('fall back to the histogram when a connection kept only buckets, marked ≈', () => {
    const bucketed = { latency: histogramOf([3, 28_415]) };
    // 28,415 µs is in bucket 211, whose upper bound is 1.05^211 = 29,576.2 µs.
    expect(latencyBucket(28_415)).toBe(211);
    expect(latencyPercentiles([bucketed])).toEqual({ p50Ms: 29.576, p99Ms: 29.576, exact: false });
    expect(latencyPercentiles([bucketed, exactly(3, 1000)])).toEqual({ p50Ms: 1.021, p99Ms: 29.576, exact: false });
    expect(percentileText(29.576, false)).toBe('≈29.6');
    expect(percentileText(1.021, false)).toBe("≈1.02");
    expect(percentileText(null, false)).toBe('-');
  });

  it('are exact up to 10,000 latencies per instance and API, and bucketed past that', () => {
    const many = (apiKey: number, n: number) => exactly(...Array.from({ length: n }, (_, i) => [apiKey, i + 1]).flat());
    expect(MAX_EXACT_PER_API).toBe(10_000);
    expect(latencyPercentiles([many(1, 10_000), many(12, 10_000)])).toEqual({ p50Ms: 5, p99Ms: 9.9, exact: true });
    expect(latencyPercentiles([many(1, 6_000), many(1, 4_001)]).exact).toBe(false);
    // Not a per-instance view (all traffic of one API, in the page): no cap.
    expect(latencyPercentiles([many(1, 6_000), many(1, 4_001)], Infinity).exact).toBe(true);
  });

  it('of one API are exact when the kept latencies are all its responses', () => {
    const h = histogramOf([1, 5000, 1, 7000]);
    expect(apiPercentiles(h, 2, [7000, 5000])).toEqual({ p50Ms: 5, p99Ms: 7, exact: true });
    expect(apiPercentiles(h, 3, [7000, 5000])).toEqual({ p50Ms: 5.107, p99Ms: 7.185, exact: false });
    expect(apiPercentiles(h, 2, undefined).exact).toBe(false);
  });

  it('sortedPairs orders by API, then latency, short and long lists alike', () => {
    expect(sortedPairs([3, 50, 1, 70, 3, 10, 1, 20])).toEqual([1, 20, 1, 70, 3, 10, 3, 50]);
    const long = Array.from({ length: 40 }, (_, i) => [i % 3, 1000 - i]).flat();
    const sorted = sortedPairs(long);
    const asPairs = Array.from({ length: 40 }, (_, i) => [sorted[2 * i]!, sorted[2 * i + 1]!]);
    expect(asPairs).toEqual([...asPairs].sort((a, b) => a[0]! - b[0]! || a[1]! - b[1]!));
    expect(asPairs.filter((p) => p[0] === 0)).toHaveLength(14);
  });
});

describe('LatencyKeeper', () => {
  const state = (): LatencyState => new ConnState({ client: { ip: '10.0.0.1', port: 1 }, broker: { ip: '10.0.0.2', port: 9092 } } as never, 0, 0);

  it('keeps every latency in arrival order while within the limits', () => {
    const k = new LatencyKeeper();
    const s = state();
    k.add(s, 3, 500);
    k.add(s, 0, 100);
    expect(s.latencyUs).toEqual([3, 500, 0, 100]);
    expect(s.latency).toEqual([]);
  });

  it('moves a connection to its histogram once the budget is spent, and a released one gives its share back', () => {
    expect(EXACT_BUDGET).toBe(1_000_000);
    const k = new LatencyKeeper(3);
    const a = state();
    const b = state();
    k.add(a, 3, 500);
    k.add(a, 3, 520);
    k.add(b, 3, 100);
    // The fourth latency is over budget: b's two go into buckets (100 µs: bucket 95; 200 µs: bucket 109).
    k.add(b, 3, 200);
    expect(b.latencyUs).toBeNull();
    expect(b.latency).toEqual([latencyBucket(100), 1, latencyBucket(200), 1]);
    expect([latencyBucket(100), latencyBucket(200)]).toEqual([95, 109]);
    // b gave its one back: a has room for one more, then not.
    k.add(a, 3, 540);
    expect(a.latencyUs).toEqual([3, 500, 3, 520, 3, 540]);
    k.release(a);
    const c = state();
    for (const us of [1, 2, 3]) k.add(c, 0, us);
    expect(c.latencyUs).toEqual([0, 1, 0, 2, 0, 3]);
  });

  it('gives up on a connection past 10,000 requests of one API, and on absurd latencies', () => {
    const k = new LatencyKeeper();
    const s = new ConnState({ client: { ip: '10.0.0.1', port: 1 }, broker: { ip: '10.0.0.2', port: 9092 } } as never, 0, 0);
    for (let i = 0; i < 10_000; i++) s.countApi(1);
    k.add(s, 1, 10);
    expect(s.latencyUs).toEqual([1, 10]);
    s.countApi(1);
    k.add(s, 1, 10);
    expect(s.latencyUs).toBeNull();
    expect(s.latency).toEqual([latencyBucket(10), 2]);
    const t = state();
    k.add(t, 0, 2 ** 37);
    expect(t.latencyUs).toBeNull();
  });
});

/** One ApiVersions answered 28.415 ms after it was sent (the builder stamps frames 100 µs apart). */
function oneRequest(): Scenario {
  const s = new Scenario();
  const c = s.connect({ client: '10.2.0.21:40000', broker: '10.1.0.11:9092' });
  const corr = c.request({ apiKey: 18, apiVersion: 4, clientId: 'orders', clientInstanceId: ID_A, body: apiVersionsRequestBody({ softwareName: 'java', softwareVersion: '4.3.0' }) });
  s.wait(0.028_315);
  c.respond(corr, apiVersionsResponseBody(4, { errorCode: 0, apiKeys: [] }));
  return s;
}

describe('kcid clients latency', () => {
  it('shows one request of 28.415 ms as p50 = p99 = 28.415 in the table, the detail and JSON', async () => {
    const file = oneRequest().file('one-request.pcap');
    const req = await runKcid(['requests', file, '--format', 'ndjson']);
    expect(JSON.parse(req.stdout).latencyMs).toBe(28.415);
    const table = await runKcid(['clients', file]);
    expect(table.stdout.split('\n')[2]).toMatch(/│ 28\.415 +│ 28\.415 +│/);
    const json = JSON.parse((await runKcid(['clients', file, '--format', 'json'])).stdout) as Record<string, unknown>[];
    expect(json[0]).toMatchObject({ latencyP50Ms: 28.415, latencyP99Ms: 28.415, latencyExact: true });
    const detail = await runKcid(['clients', file, '--instance', 'ASNF']);
    expect(detail.stdout).toContain('latency p50 28.415 ms, p99 28.415 ms');
  });

  it('keeps them exact through a summary file and kcid merge; a summary without latencyUs gives ≈ bounds', async () => {
    const dir = tmpDir();
    const file = oneRequest().file('one-request.pcap');
    const summary = join(dir, 'one.json');
    expect((await runKcid(['analyze', file, '--format', 'summary-json', '-o', summary])).code).toBeLessThan(2);
    const doc = JSON.parse(readFileSync(summary, 'utf8'));
    // The file carries both: every latency, and the histogram for readers that know only buckets.
    expect(doc.connections[0].latencyUs).toEqual([18, 28_415]);
    expect(doc.connections[0].latency).toEqual([211, 1]);
    // merge draws the page: the instances table and latency by API.
    const again = join(dir, 'again.json');
    writeFileSync(again, readFileSync(summary));
    const page = (await runKcid(['merge', summary, again, '--format', 'html'])).stdout;
    // p50 and p99 of the one instance (two requests now) and of ApiVersions.
    expect(page.match(/<td class="num" data-sort="28\.415">28\.415<\/td>/g)).toHaveLength(4);
    expect(page).toContain('<td>ApiVersions</td><td class="num" data-sort="2">2</td><td class="num" data-sort="28.415">28.415</td><td class="num" data-sort="28.415">28.415</td>');
    expect(page).toContain('p50 28.415 ms · p99 28.415 ms');
    delete doc.connections[0].latencyUs;
    const old = join(dir, 'old.json');
    writeFileSync(old, JSON.stringify(doc));
    const mixed = (await runKcid(['merge', summary, old, '--format', 'html'])).stdout;
    expect(mixed.match(/<td class="num" data-sort="29\.576">≈29\.6<\/td>/g)).toHaveLength(4);
    expect(mixed).toContain('p50 ≈29.6 ms · p99 ≈29.6 ms');
    const bad = join(dir, 'bad.json');
    doc.connections[0].latencyUs = [18];
    writeFileSync(bad, JSON.stringify(doc));
    const r = await runKcid(['merge', bad]);
    expect([r.code, r.stderr.trim()]).toEqual([2, `kcid: ${bad}: a connection's 'latencyUs' is not [apiKey, microseconds, ...]`]);
  });
});

const hasTshark = onPath('tshark');

describe('kept latencies against tshark', skipUnless(hasTshark, NO_TSHARK), () => {
  // Every answered request of real clients: tshark's response (kafka.request_frame) minus its request's time.
  // tshark 4.0 pairs no response with its request for the newer Produce, Fetch, ListOffsets and two Metadata of the
  // confluent-kafka-javascript capture: those are the only ones it lacks.
  it.each([
    ['fixtures/ckjs-mock-telemetry.pcap', ['0', '0', '1', '1', '1', '1', '1', '1', '1', '1', '1', '1', '1', '1', '2', '2', '2', '2', '3', '3']],
    ['fixtures/kcat-mock-consumer-group.pcapng', []],
    ['fixtures/kafkajs-mock-group.pcap', []],
  ])('%s: the same [apiKey, µs] as tshark, every one', async (file, notInTshark) => {
    const dir = tmpDir();
    const summary = join(dir, 'summary.json');
    await runKcid(['analyze', file, '--format', 'summary-json', '-o', summary]);
    const doc = JSON.parse(readFileSync(summary, 'utf8')) as { inputs: { kafkaPorts: number[] }[]; connections: { latencyUs: number[] }[] };
    const ours = doc.connections.flatMap((c) => Array.from({ length: c.latencyUs.length / 2 }, (_, i) => `${c.latencyUs[2 * i]}:${c.latencyUs[2 * i + 1]}`)).sort();
    const decodeAs = doc.inputs[0]!.kafkaPorts.flatMap((p) => ['-d', `tcp.port==${p},kafka`]);
    const fields = execFileSync('tshark', ['-r', file, ...decodeAs, '-T', 'fields', '-e', 'frame.number', '-e', 'frame.time_epoch', '-e', 'kafka.request_frame', '-e', 'kafka.api_key'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    // µs as kcid counts them: whole seconds and the nanoseconds cut to microseconds.
    const micros = (t: string) => Number(t.split('.')[0]) * 1e6 + Math.floor(Number(t.split('.')[1]!.padEnd(9, '0')) / 1000);
    const timeOf = new Map<string, number>();
    const theirs: string[] = [];
    for (const line of fields.trimEnd().split('\n')) {
      const [frame, time, requestFrame, apiKey] = line.split('\t');
      timeOf.set(frame!, micros(time!));
      if (requestFrame) theirs.push(`${apiKey!.split(',')[0]}:${micros(time!) - timeOf.get(requestFrame)!}`);
    }
    const missing = [...ours];
    for (const t of theirs) {
      const at = missing.indexOf(t);
      expect(at, `tshark's ${t} is not among kcid's`).toBeGreaterThanOrEqual(0);
      missing.splice(at, 1);
    }
    expect(missing.map((m) => m.split(':')[0]).sort()).toEqual(notInTshark);
    expect(theirs.length).toBeGreaterThan(20);
  });
});

describe('an instance past 10,000 latencies of one API', () => {
  it('shows bucket bounds marked ≈, and latencyExact false', async () => {
    // 10,001 ApiVersions on one connection, each answered at once (100 µs: bucket 95, bound 103 µs).
    const s = new Scenario();
    const c = s.connect({ client: '10.2.0.21:40000', broker: '10.1.0.11:9092' });
    const body = apiVersionsRequestBody({ softwareName: 'java', softwareVersion: '4.3.0' });
    const answer = apiVersionsResponseBody(4, { errorCode: 0, apiKeys: [] });
    for (let i = 0; i < 10_001; i++) c.respond(c.request({ apiKey: 18, apiVersion: 4, clientId: i === 0 ? 'orders' : null, clientInstanceId: ID_A, body }), answer);
    const file = s.file('many.pcap');
    const json = JSON.parse((await runKcid(['clients', file, '--format', 'json'])).stdout) as Record<string, unknown>[];
    expect(json[0]).toMatchObject({ requests: 10_001, latencyP50Ms: 0.103, latencyP99Ms: 0.103, latencyExact: false });
    expect((await runKcid(['clients', file])).stdout.split('\n')[2]).toMatch(/│ ≈0\.10 +│ ≈0\.10 +│/);
  }, 60_000);
});
