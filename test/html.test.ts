/**
 * `--format html` without a browser: the activity a summary keeps (buckets, latency, ticks) and
 * its bounds, the page's escaping and Content-Security-Policy, merge giving the same bytes, a
 * hostile summary refused, and the size bound for a million requests. test/html-browser.test.ts
 * opens the pages in Chromium.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MAX_BROKERS, MAX_TICKS_PER_CONNECTION, MIN_BUCKET_US, OTHER_BROKERS, activityProblem, type InputActivity } from '../src/analysis/activity.js';
import { buildReport } from '../src/analysis/report.js';
import { analyzeInput } from '../src/analysis/run.js';
import type { CaptureSummary, ConnectionSummary, Finding } from '../src/analysis/types.js';
import { MAX_MARKERS } from '../src/report/html/timeline.js';
import { renderHtml } from '../src/report/html/page.js';
import { esc } from '../src/report/html/text.js';
import { removeTmpFiles, tmpDir, tmpFile } from './builder/capture.js';
import { Scenario } from './builder/scenario.js';
import { errorCodeResponseBody } from './builder/kafka.js';
import { DEFAULTS, ID_A, ID_A_B64, runKcid } from './helpers.js';
import { HOSTILE_ATTR, HOSTILE_IMG, HOSTILE_SCRIPT, htmlScenario } from './fixtures/html-scenario.js';

afterAll(removeTmpFiles);

const T0 = 1_764_547_200_000_000; // the scenario's clock start, µs

describe('activity (what a summary keeps for the page)', () => {
  it('counts requests and error responses per broker in 1 ms buckets, latency per API, and every request as a tick', async () => {
    const file = htmlScenario().file('page.pcap');
    const r = await analyzeInput(file, 0, { ...DEFAULTS, activity: true });
    const a = r.input.activity!;
    // Requests over 2 s: 2,000 1-ms buckets do not fit in 1,024, 2 ms ones do.
    expect(a.bucketUs).toBe(2000);
    expect(a.ticksNotKept).toBe(0);
    expect(a.ticks).toHaveLength(6);
    // Connection 1 (TCP numbers from 1). Frames: 3 handshakes of 3 packets, then each request and response one packet, 100 µs apart.
    expect(a.ticks[0]).toEqual([1, 10, T0 + 900, 18, 3, 1, 0, 100]);
    const errors = a.ticks.filter((t) => t[6] !== null && t[6] !== 0);
    expect(errors.map((t) => [t[3], t[6]])).toEqual([[18, 35]]);
    const unanswered = a.ticks.filter((t) => t[7] === null);
    expect(unanswered.map((t) => [t[3], t[4]])).toEqual([[3, 12]]);
    // Buckets from the ticks' own times: each request counted at its broker, the error at its request's bucket.
    const expected = new Map<string, Map<number, [number, number]>>();
    const brokerOf = new Map(r.connections.map((c) => [c.id, c.broker]));
    for (const t of a.ticks) {
      const broker = brokerOf.get(t[0])!;
      const m = expected.get(broker) ?? new Map<number, [number, number]>();
      expected.set(broker, m);
      const b = Math.floor(t[2] / 2000);
      const c = m.get(b) ?? [0, 0];
      c[0]++;
      if (t[6] !== null && t[6] !== 0) c[1]++;
      m.set(b, c);
    }
    const flat = [...expected].sort((x, y) => (x[0] < y[0] ? -1 : 1)).map(([broker, m]) => [broker, [...m].sort((x, y) => x[0] - y[0]).flatMap(([b, [n, e]]) => [b, n, e])]);
    expect(a.brokers).toEqual(flat);
    expect(a.brokers.map(([b]) => b)).toEqual(['10.0.0.8:9092', '10.0.0.9:9092']);
    // Five answered requests: four ApiVersions, one Metadata, each 100 µs (histogram bucket 95: 1.05^95 ≈ 103 µs).
    expect(a.latency).toEqual([
      [3, [95, 1]],
      [18, [95, 4]],
    ]);
  });

  it(`keeps ${MAX_TICKS_PER_CONNECTION} ticks per connection and counts the rest in the buckets`, async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50001', broker: '10.0.0.9:9092' });
    for (let i = 0; i < 250; i++) c.request({ apiKey: 18, apiVersion: 3, clientInstanceId: ID_A });
    c.close();
    const r = await analyzeInput(s.file('many.pcap'), 0, { ...DEFAULTS, activity: true });
    const a = r.input.activity!;
    expect(a.ticks).toHaveLength(MAX_TICKS_PER_CONNECTION);
    expect(a.ticksNotKept).toBe(50);
    const counted = a.brokers[0]![1].filter((_, i) => i % 3 === 1).reduce((x, y) => x + y, 0);
    expect(counted).toBe(250);
    // 250 requests 100 µs apart: 25 ms, 1 ms buckets.
    expect(a.bucketUs).toBe(MIN_BUCKET_US);
  });

  it('beyond 20,000 requests keeps a sample spread over the capture, error responses first when it thins', async () => {
    const s = new Scenario();
    // 250 connections of 100 requests (25,000), one after another; request 1 of connection 240 answered with an error.
    for (let i = 0; i < 250; i++) {
      const c = s.connect({ client: `10.0.${i >> 8}.${i & 255}:50001`, broker: '10.0.0.9:9092' });
      for (let j = 0; j < 100; j++) {
        const corr = c.request({ apiKey: 18, apiVersion: 3, clientInstanceId: ID_A });
        c.respond(corr, errorCodeResponseBody({ errorCode: i === 240 && j === 0 ? 35 : 0, flexible: false }));
      }
      c.close();
    }
    const r = await analyzeInput(s.file('sampled.pcap'), 0, { ...DEFAULTS, activity: true });
    const a = r.input.activity!;
    // Full at 20,000: every other kept (10,000), then every other request of the last 5,000 (2,500).
    expect(a.ticks).toHaveLength(12_500);
    expect(a.ticksNotKept).toBe(12_500);
    const connections = new Set(a.ticks.map((t) => t[0]));
    expect(connections.size).toBe(250);
    expect(a.ticks.filter((t) => t[6] === 35)).toHaveLength(1);
    expect(a.ticks.map((t) => t[2])).toEqual([...a.ticks.map((t) => t[2])].sort((x, y) => x - y));
  });

  it(`keeps buckets for ${MAX_BROKERS} brokers and sums any further ones under '${OTHER_BROKERS}'`, async () => {
    const s = new Scenario();
    for (let i = 0; i < MAX_BROKERS + 5; i++) {
      const c = s.connect({ client: '10.0.0.1:50001', broker: `10.9.${i >> 8}.${i & 255}:9092` });
      c.request({ apiKey: 18, apiVersion: 3, clientInstanceId: ID_A });
      c.close();
    }
    const a = (await analyzeInput(s.file('brokers.pcap'), 0, { ...DEFAULTS, activity: true })).input.activity!;
    expect(a.brokers).toHaveLength(MAX_BROKERS + 1);
    const other = a.brokers.find(([b]) => b === OTHER_BROKERS)!;
    expect(other[1].filter((_, i) => i % 3 === 1).reduce((x, y) => x + y, 0)).toBe(5);
  });

  it('is not collected for the other formats', async () => {
    const r = await analyzeInput(htmlScenario().file('plain.pcap'), 0, DEFAULTS);
    expect(r.input.activity).toBeUndefined();
  });

  it.each([
    ['a bucket width that is not 1 ms times a power of two', { bucketUs: 3000 }, "'bucketUs' is not 1000 µs times a power of two"],
    ['a bucket list of the wrong stride', { brokers: [['b:1', [1, 2]]] }, "'brokers' is not [[broker, [bucket, requests, errors, ...]]]"],
    ['a negative count', { latency: [[3, [95, -1]]] }, "'latency' is not [[apiKey, [bucket, count, ...]]]"],
    ['a latency bucket past 2^53 µs (an endless axis)', { latency: [[3, [1_000_000_000, 1]]] }, "'latency' is not [[apiKey, [bucket, count, ...]]]"],
    ['a tick with a string', { ticks: [[0, 1, 2, 3, 4, 5, '<b>', null]] }, "'ticks' is not a list of [connection, frame, time, apiKey, apiVersion, correlationId, errorCode, latency]"],
  ])('a summary with %s is refused', (_what, change, problem) => {
    const ok: InputActivity = { bucketUs: 1000, brokers: [['10.0.0.9:9092', [5, 1, 0]]], latency: [[3, [95, 1]]], ticks: [[0, 1, 5000, 3, 12, 1, 0, 100]], ticksNotKept: 0 };
    expect(activityProblem(ok)).toBeNull();
    expect(activityProblem({ ...ok, ...change })).toBe(problem);
  });

  it('kcid merge refuses a summary whose activity is damaged, in one line, exit 2', async () => {
    const part = JSON.parse((await runKcid(['analyze', 'fixtures/kip1313-mix.pcapng', '--format', 'summary-json'])).stdout) as { inputs: { activity: InputActivity }[] };
    part.inputs[0]!.activity.ticks[0]![2] = 1.5;
    const file = tmpFile('bad-activity.json', JSON.stringify(part));
    const r = await runKcid(['merge', file, '--format', 'html']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`kcid: ${file}: an input's 'activity' 'ticks' is not a list of [connection, frame, time, apiKey, apiVersion, correlationId, errorCode, latency]\n`);
    expect(r.stdout).toBe('');
  });
});

/** The text between the page's <tag> and </tag>. */
function inline(page: string, tag: string): string {
  const m = page.match(new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`));
  return m![1]!;
}

describe('the page', () => {
  const file = htmlScenario().file('page.pcap');

  it('escapes every wire string: HTML in ClientIds is text, in elements and in attributes', async () => {
    const r = await runKcid(['analyze', file, '--format', 'html', '--fail-on', 'none']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    const page = r.stdout;
    for (const hostile of [HOSTILE_IMG, HOSTILE_SCRIPT, HOSTILE_ATTR]) {
      expect(page).not.toContain(hostile);
      expect(page).toContain(esc(hostile));
    }
    expect(esc(HOSTILE_IMG)).toBe('&lt;img src=x onerror=alert(1)&gt;');
    expect(esc(HOSTILE_ATTR)).toBe('&quot; onmouseover=&quot;alert(2)&quot; x=&#39;');
    // One script element, one style element, no image, no link, no reference to anywhere.
    expect(page.match(/<script/g)).toHaveLength(1);
    expect(page.match(/<style/g)).toHaveLength(1);
    expect(page).not.toMatch(/<(img|link|iframe|object|embed|base|form)\b|\s(src|href|action)="|url\(|@import/i);
    expect(page).not.toMatch(/https?:\/\//);
  });

  it("allows exactly its own script and style by hash, and nothing else (default-src 'none')", async () => {
    const page = (await runKcid(['analyze', file, '--format', 'html', '--fail-on', 'none'])).stdout;
    const hash = (s: string) => createHash('sha256').update(s).digest('base64');
    const csp = page.match(/<meta http-equiv="Content-Security-Policy" content="([^"]*)">/)![1]!.replace(/&#39;/g, "'");
    expect(csp).toBe(
      `default-src 'none'; style-src 'sha256-${hash(inline(page, 'style'))}'; script-src 'sha256-${hash(inline(page, 'script'))}'; img-src 'none'; base-uri 'none'; form-action 'none'`,
    );
    // Nothing is styled inline (a style attribute would need 'unsafe-inline'); no event handler attributes.
    expect(page).not.toMatch(/\sstyle="/);
    expect(page).not.toMatch(/\son[a-z]+="/);
  });

  it('has its parts in the order the issue gives, and draws one lane per instance', async () => {
    const page = (await runKcid(['analyze', file, '--format', 'html', '--fail-on', 'none'])).stdout;
    const order = ['summary', 'inputs', 'findings', 'timeline', 'rates', 'latency', 'instances', 'connections', 'telemetry'].map((id) => page.indexOf(`id="${id}"`));
    expect(order.every((p, i) => p > 0 && (i === 0 || p > order[i - 1]!))).toBe(true);
    expect(page).toContain('<p class="summary" id="summary">1 capture, 29 packets, 3 Kafka connections (port 9092), 6 requests, 3 client instances: 1 error, 0 warnings, 0 notes</p>');
    expect(page.match(/<g class="lane" data-kind="instance"/g)).toHaveLength(3);
    expect(page).toContain(`data-instance="${ID_A_B64}"`);
    expect(page.match(/class="tick( [a-z]+)?"/g)).toEqual(['class="tick"', 'class="tick"', 'class="tick"', 'class="tick"', 'class="tick err"', 'class="tick none"']);
    expect(page.match(/class="marker marker-error"/g)).toHaveLength(1);
    expect(page.match(/<svg class="rate wide" data-broker="([^"]*)"/g)).toEqual(['<svg class="rate wide" data-broker="10.0.0.8:9092"', '<svg class="rate wide" data-broker="10.0.0.9:9092"']);
  });

  it('is byte-stable, the same from merged summaries (and --jobs 2) as from the captures', async () => {
    const other = 'fixtures/kip1313-mix.pcapng';
    const all = await runKcid(['analyze', file, other, '--format', 'html', '--jobs', '1']);
    expect((await runKcid(['analyze', file, other, '--format', 'html', '--jobs', '2'])).stdout).toBe(all.stdout);
    const dir = tmpDir();
    const parts = [file, other].map((f, i) => {
      const p = join(dir, `part${i}.json`);
      return { p, r: runKcid(['analyze', f, '--format', 'summary-json', '--output', p, '--fail-on', 'none']) };
    });
    for (const x of parts) await x.r;
    const merged = await runKcid(['merge', ...parts.map((x) => x.p), '--format', 'html']);
    expect(merged.code).toBe(all.code);
    expect(merged.stdout).toBe(all.stdout);
    expect(readFileSync(parts[0]!.p, 'utf8')).toContain('"activity":{"bucketUs":2000,');
  });

  it('with filters: the lanes and ticks of the connections kept, and rates that say they count everything', async () => {
    const page = (await runKcid(['analyze', 'fixtures/kip1313-mix.pcapng', '--format', 'html', '--broker', '10.1.0.12'])).stdout;
    expect(page.match(/<g class="lane" data-kind="instance"/g)).toHaveLength(3);
    expect(page.match(/class="tick( [a-z]+)?"/g)).toHaveLength(7);
    expect(page).toContain('These charts count all 27 requests of the inputs; the filters keep 7 of them in the rest of the page.');
    const whole = (await runKcid(['analyze', 'fixtures/kip1313-mix.pcapng', '--format', 'html'])).stdout;
    expect(whole).not.toContain('These charts count all');
  });

  it('from summaries without activity (an older kcid): the tables and lanes, and notes saying what cannot be drawn', async () => {
    const doc = JSON.parse((await runKcid(['analyze', 'fixtures/kip1313-mix.pcapng', '--format', 'summary-json'])).stdout) as { inputs: { activity?: unknown }[] };
    delete doc.inputs[0]!.activity;
    const page = (await runKcid(['merge', tmpFile('old.json', JSON.stringify(doc)), '--format', 'html'])).stdout;
    expect(page.match(/<g class="lane" data-kind="instance"/g)).toHaveLength(9);
    expect(page.match(/class="tick( [a-z]+)?"/g)).toBeNull();
    expect(page).toContain('The summaries this page was made from hold no request times (made by an older kcid): requests are not drawn.');
    expect(page).toContain('<p>No requests with times to chart.</p>');
    expect(page).toContain('<p>No answered requests.</p>');
  });

  it('a summary whose connection times make no sense still makes a page (no endless axis)', async () => {
    const doc = JSON.parse((await runKcid(['analyze', 'fixtures/kip1313-mix.pcapng', '--format', 'summary-json'])).stdout) as { connections: { firstUs: number; lastUs: number }[] };
    doc.connections[0]!.firstUs = -1e308;
    doc.connections[1]!.lastUs = 1e308;
    const r = await runKcid(['merge', tmpFile('odd.json', JSON.stringify(doc)), '--format', 'html']);
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain('<svg id="timeline"');
  });

  it('stays under 20 MB for 1,000,000 requests on 100,000 connections, and says what it aggregated', () => {
    const summary = bigSummary(100_000, 10);
    const report = buildReport(summary);
    expect(report.counts.requests).toBe(1_000_000);
    const page = renderHtml(report);
    const size = Buffer.byteLength(page);
    if (process.env.KCID_PRINT_SIZE) console.log(`page of 1,000,000 requests: ${size} bytes`);
    expect(size).toBeLessThan(20 * 1024 * 1024);
    expect(page.match(/<g class="lane" data-kind="instance"/g)).toHaveLength(39);
    expect(page).toContain('the other 99,961 share the lane &quot;99,961 more instances&quot;');
    expect(page).toContain('20,000 requests are drawn as ticks; 980,000 more are counted in the rates below but not drawn (beyond 20,000 requests per input');
    expect(page).toContain('The first 5,000 of 100,000 instances are listed.');
    expect(page).toContain('The first 5,000 of 100,000 connections are listed.');
    expect(page.match(/class="tick"/g)).toHaveLength(20_000);
  });
});

describe('the timeline\'s findings (issues 26.16, 27.11)', () => {
  const finding = (c: ConnectionSummary, severity: 'error' | 'warning' | 'info', us: number, rule: string, frame: number): Finding => ({
    rule, severity, message: `${rule} at ${frame}`, frame, timeUs: us, client: c.client, broker: c.broker,
    apiKey: 3, apiVersion: 12, correlationId: frame, clientInstanceId: null, input: c.input,
  });

  it('draws errors above warnings above notes at the same place, whatever the findings\' order', () => {
    const summary = bigSummary(1, 10);
    const c = summary.connections[0]!;
    summary.findings = [finding(c, 'error', T0 + 5000, 'e-rule', 9), finding(c, 'warning', T0 + 5000, 'w-rule', 9), finding(c, 'info', T0 + 5000, 'i-rule', 9)];
    const page = renderHtml(buildReport(summary));
    expect(page.match(/class="marker marker-[a-z]+"/g)).toEqual(['class="marker marker-info"', 'class="marker marker-warning"', 'class="marker marker-error"']);
  });

  it(`groups findings past ${MAX_MARKERS} into marks with their counts: 100,000 findings make a page of a few MB`, () => {
    const summary = bigSummary(1_000, 10);
    const severities = ['error', 'warning', 'info'] as const;
    for (let i = 0; i < 100_000; i++) {
      const c = summary.connections[i % 1_000]!;
      summary.findings.push(finding(c, severities[i % 3]!, c.firstUs + (i % 10) * 1000, `rule-${i % 7}`, c.firstFrame + (i % 10)));
    }
    const report = buildReport(summary);
    const page = renderHtml(report);
    const size = Buffer.byteLength(page);
    if (process.env.KCID_PRINT_SIZE) console.log(`page of 100,000 findings: ${size} bytes`);
    const marks = page.slice(page.indexOf(`<g class="markers">`), page.indexOf(`</svg>`, page.indexOf(`<g class="markers">`)));
    if (process.env.KCID_PRINT_SIZE) console.log(`marks: ${marks.length} bytes, ${(marks.match(/<a /g) ?? []).length}, table ${page.indexOf(`id="timeline"`) - page.indexOf(`id="findings"`)}`);
    // The findings table (5,000 rows) is 2.1 MB of it, the 1,000 instances and connections most of the rest.
    expect(size).toBeLessThan(8 * 1024 * 1024);
    expect(marks.length).toBeLessThan(1024 * 1024);
    const counts = [...page.matchAll(/class="marker marker-([a-z]+) marker-group" data-count="(\d+)"/g)];
    expect(counts.reduce((n, m) => n + Number(m[2]), 0)).toBe(100_000);
    expect(page).not.toMatch(/class="marker marker-[a-z]+" data-rule=/);
    // Notes, then warnings, then errors: an error group is on top.
    const order = counts.map((m) => m[1]);
    expect(order.indexOf('error')).toBeGreaterThan(order.lastIndexOf('warning'));
    expect(order.indexOf('warning')).toBeGreaterThan(order.lastIndexOf('info'));
    expect(page).toContain(`100,000 findings are drawn as ${counts.length.toLocaleString('en-US')} marks, one per row, severity and 6 pixels of time (beyond 2,000 findings)`);
    expect(page.match(/<a href="#findings"><path class="marker /g)).toHaveLength(counts.length);
  });

  it('numbers inputs from 1, as the table and JSON do', async () => {
    const file = htmlScenario().file('page.pcap');
    const page = (await runKcid(['analyze', file, 'fixtures/kip1313-mix.pcapng', '--format', 'html', '--fail-on', 'none'])).stdout;
    const inputs = page.slice(page.indexOf('id="inputs"'), page.indexOf('id="findings"'));
    expect([...inputs.matchAll(/<tr><td class="num">(\d+)<\/td>/g)].map((m) => m[1])).toEqual(['1', '2']);
    const findings = page.slice(page.indexOf('id="findings-table"'), page.indexOf('id="timeline"'));
    const frames = [...findings.matchAll(/data-label="Frame"[^>]*>(\d+):\d+</g)].map((m) => m[1]);
    expect(new Set(frames)).toEqual(new Set(['1', '2']));
    expect(page).not.toMatch(/input 0 frame/);
    expect(page).toMatch(/input 2 frame \d+/);
  });
});

/**
 * A summary as a capture of `connections` connections (each its own instance, `perConnection`
 * requests 1 ms apart, a connection starting every 10 ms) would give, with the activity the
 * collector keeps: its caps reached (20,000 ticks, 1,024 buckets).
 */
function bigSummary(connections: number, perConnection: number): CaptureSummary {
  const conns: ConnectionSummary[] = [];
  const ticks: InputActivity['ticks'] = [];
  const buckets = new Map<number, number>();
  let bucketUs = 1000;
  const spanUs = connections * 10_000 + perConnection * 1000;
  while (spanUs / bucketUs > 1024) bucketUs *= 2;
  for (let i = 0; i < connections; i++) {
    const first = T0 + i * 10_000;
    const hex = i.toString(16).padStart(32, '0');
    const id = Buffer.from(hex, 'hex').toString('base64url');
    conns.push({
      input: 0, id: i, client: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}:40000`, clientIp: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
      broker: `10.1.0.${i % 3}:9092`, startSeen: true, firstFrame: i * 30 + 1, firstUs: first, lastUs: first + perConnection * 1000,
      headerInstanceIds: [id], telemetryInstanceId: null, clientIds: [`client-${i}`], software: [], requests: perConnection, responses: perConnection,
      errorResponses: 0, apis: [[3, perConnection]], gaps: 0, gapBytes: 0, firstRequestFrame: i * 30 + 4, firstRequestUs: first, latency: [95, perConnection],
    });
    for (let j = 0; j < perConnection; j++) {
      const us = first + j * 1000;
      if (ticks.length < 20_000) ticks.push([i, i * 30 + 4 + j, us, 3, 12, j + 1, 0, 100]);
      const b = Math.floor(us / bucketUs);
      buckets.set(b, (buckets.get(b) ?? 0) + 1);
    }
  }
  const flat = [...buckets].sort((a, b) => a[0] - b[0]).flatMap(([b, n]) => [b, n, 0]);
  return {
    version: 1,
    inputs: [{
      file: 'big.pcap', format: 'pcap', gzip: false, packets: connections * 30, bytes: 1e9, kafkaPorts: [9092], tcpPackets: connections * 30, nonTcpPackets: 0,
      unknownLinkTypePackets: 0, malformedPackets: 0, truncatedPackets: 0, truncatedAtFrame: 0, damagedRecords: 0, notes: [], startUs: T0,
      activity: { bucketUs, brokers: [['10.1.0.0:9092', flat]], latency: [[3, [95, connections * perConnection]]], ticks, ticksNotKept: connections * perConnection - ticks.length },
    }],
    connections: conns,
    findings: [],
  };
}

describe('labels in the SVG (issue 27.13)', () => {
  it('are clipped by display width, never inside a character or an emoji sequence', async () => {
    const { clip } = await import('../src/report/html/text.js');
    expect(clip('10.0.0.1:9092', 30)).toBe('10.0.0.1:9092');
    expect(clip('abcdefghij', 5)).toBe('abcd…');
    expect(clip('注文サービス', 5)).toBe('注文…');
    expect(clip('👩‍👩‍👧👩‍👩‍👧👩‍👩‍👧', 5)).toBe('👩‍👩‍👧👩‍👩‍👧…');
    expect(clip('e\u0301e\u0301e\u0301', 2)).toBe('e\u0301…');
  });
});
