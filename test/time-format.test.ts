/**
 * `-t`, tshark's letters, with exact output on every table that shows a time and on --follow lines;
 * and against tshark itself, which prints the same instants with nanoseconds.
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { Scenario } from './builder/scenario.js';
import { apiVersionsRequestBody, apiVersionsResponseBody } from './builder/kafka.js';
import { ID_A, NO_TSHARK, onPath, runKcid, skipUnless } from './helpers.js';
import { makeClock, TIME_FORMATS } from '../src/report/clock.js';
import { parseTimeBound } from '../src/analysis/filters.js';

/**
 * Two ApiVersions on one connection, starting at 2025-12-01T12:04:05.123456Z (frames 100 µs apart):
 * SYN .123456, SYN+ACK .123556, ACK .123656; request 1 at .123756 (frame 4), its response 2.5 ms
 * later, .126356 (frame 5); then 1.5 s later request 2 at 12:04:06.626456 (frame 6), answered at
 * .626556 (frame 7). The second request repeats the ClientId: client-id-after-first (frame 6).
 */
function twoRequests(): Scenario {
  const s = new Scenario(1_764_590_645);
  s.wait(0.123_456);
  const c = s.connect({ client: '10.2.0.21:40000', broker: '10.1.0.11:9092' });
  const body = apiVersionsRequestBody({ softwareName: 'java', softwareVersion: '4.3.0' });
  const first = c.request({ apiKey: 18, apiVersion: 4, clientId: 'orders', clientInstanceId: ID_A, body });
  s.wait(0.0025);
  c.respond(first, apiVersionsResponseBody(4, { errorCode: 0, apiKeys: [] }));
  s.wait(1.5);
  const second = c.request({ apiKey: 18, apiVersion: 4, clientId: 'orders', clientInstanceId: ID_A, body });
  c.respond(second, apiVersionsResponseBody(4, { errorCode: 0, apiKeys: [] }));
  return s;
}

/** [letter, request 1, request 2] as kcid shows them (cut to the millisecond). */
const LETTERS: [string, string, string][] = [
  ['ad', '2025-12-01T12:04:05.123Z', '2025-12-01T12:04:06.626Z'],
  ['ud', '2025-12-01T12:04:05.123Z', '2025-12-01T12:04:06.626Z'],
  ['a', '12:04:05.123', '12:04:06.626'],
  ['u', '12:04:05.123', '12:04:06.626'],
  ['e', '1764590645.123', '1764590646.626'],
  // Seconds since the first packet (the SYN at .123456).
  ['r', '0.000', '1.503'],
];

describe('-t', () => {
  it.each(LETTERS)('-t %s: requests, clients --instance and analyze show %s', async (letter, t1, t2) => {
    const file = twoRequests().file('two-requests.pcap');
    const requests = (await runKcid(['requests', file, '-t', letter])).stdout.split('\n');
    expect(requests[1]).toMatch(new RegExp(`^ +4  ${t1.replace(/\./g, '\\.')} +10\\.2\\.0\\.21:40000 -> 10\\.1\\.0\\.11:9092  `));
    expect(requests[2]).toMatch(new RegExp(`^ +6  ${t2.replace(/\./g, '\\.')} +10\\.2\\.0\\.21:40000 -> 10\\.1\\.0\\.11:9092  `));
    const detail = (await runKcid(['clients', file, '--instance', 'ASNF', '-t', letter])).stdout;
    expect(detail).toContain(`Seen: ${t1} to ${t2}\n`);
    const timeline = detail.slice(detail.indexOf('Timeline')).split('\n');
    expect(timeline[3]).toMatch(new RegExp(`^│ ${t1.replace(/\./g, '\\.')} +│ 4 +│ 10\\.1\\.0\\.11:9092 │ ApiVersions v4 │ 1 +│ 5 +│ NONE \\(0\\) │ 2\\.600 │$`));
    const follow = (await runKcid(['analyze', file, '--follow', '-t', letter])).stdout.split('\n');
    expect(follow[0]).toMatch(new RegExp(`^${t2.replace(/\./g, '\\.')}  error  client-id-after-first  frame 6  `));
  });

  it('-t l is local time with its offset (TZ), -t u UTC as in tshark, and 0.0005 s is 0.000 in every format', async () => {
    const file = twoRequests().file('two-requests.pcap');
    const kolkata = (await runKcid(['requests', file, '-t', 'l'], { env: { TZ: 'Asia/Kolkata' } })).stdout.split('\n');
    expect(kolkata[1]).toMatch(/^ +4  2025-12-01T17:34:05\.123\+05:30  /);
    const u = (await runKcid(['requests', file, '-t', 'u'], { env: { TZ: 'Asia/Kolkata' } })).stdout.split('\n');
    expect(u[1]).toMatch(/^ +4  12:04:05\.123  /);
    // Half a millisecond past the second: cut, not rounded, in every format (frame 6 of the bundled capture is so).
    const at = 1_764_547_200_000_500;
    expect(TIME_FORMATS.map((f) => makeClock(f, at - 500, 'UTC')(at))).toEqual([
      '2025-12-01T00:00:00.000Z',
      '00:00:00.000',
      '2025-12-01T00:00:00.000Z',
      '00:00:00.000',
      '2025-12-01T00:00:00.000Z',
      '0.000',
      '1764547200.000',
    ]);
    expect(TIME_FORMATS).toEqual(['ad', 'a', 'ud', 'u', 'l', 'r', 'e']);
  });
});

const hasTshark = onPath('tshark');

describe('-t against tshark', skipUnless(hasTshark, NO_TSHARK), () => {
  // tshark prints nanoseconds (ud with a space for the T); kcid cuts to the millisecond.
  const asKcid: Record<string, (t: string) => string> = {
    ud: (t) => `${t.replace(' ', 'T').slice(0, 23)}Z`,
    u: (t) => t.slice(0, 12),
    e: (t) => t.trim().slice(0, t.trim().indexOf('.') + 4),
    r: (t) => t.trim().slice(0, t.trim().indexOf('.') + 4),
  };
  it.each(Object.keys(asKcid))('-t %s gives the times tshark gives, cut to the millisecond', async (letter) => {
    const file = twoRequests().file('two-requests.pcap');
    const columns = 'gui.column.format:"No.","%m","Time","%t"';
    const theirs = execFileSync('tshark', ['-r', file, '-t', letter, '-o', columns, '-Y', 'frame.number == 4 or frame.number == 6'], {
      encoding: 'utf8',
      env: { ...process.env, TZ: 'UTC' },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const tshark = theirs.trimEnd().split('\n').map((l) => {
      const [, frame, t] = /^ *(\d+) (.+)$/.exec(l)!;
      return [frame, asKcid[letter]!(t!)];
    });
    const ours = (await runKcid(['requests', file, '-t', letter])).stdout.split('\n').slice(1, 3).map((l) => l.trim().split(/ {2,}/).slice(0, 2));
    expect(ours).toEqual(tshark);
    expect(ours).toHaveLength(2);
  });
});

describe('--since/--until times', () => {
  it.each([
    ['2025-12-01', 1_764_547_200_000_000],
    ['2025-12-01 00:00:00', 1_764_547_200_000_000],
    ['2025-12-01T00:00:00', 1_764_547_200_000_000],
    ['2025-12-01 12:04', 1_764_590_640_000_000],
    ['2025-12-01T12:04:05.123456Z', 1_764_590_645_123_456],
    ['2025-12-01 12:04:05.1234567', 1_764_590_645_123_456],
    ['2025-12-01T13:04:05.5+01:00', 1_764_590_645_500_000],
    ['2025-12-01 07:04:05-0500', 1_764_590_645_000_000],
    ['2025-12-01 12:04:05 Z', 1_764_590_645_000_000],
  ])('%s is %i µs (UTC unless a zone is given)', (text, us) => {
    expect(parseTimeBound(text, '--since')).toEqual({ absoluteUs: us });
  });

  it.each(['2025-02-30', '2025-13-01', '2025-12-01 24:00', '2025-12-01T12:60', '2025-12-1', 'yesterday'])('%s is an error', (text) => {
    expect(() => parseTimeBound(text, '--since')).toThrow(`invalid --since '${text}' (expected a UTC time such as 2026-12-01`);
  });
});

describe('years outside 0000-9999 (issue 27.13)', () => {
  // Date.UTC(10000, 0, 1, 0, 0, 5, 992) ms = 253402300805992, and 256 µs more (doubles are 32 µs apart there).
  const y10000 = 253_402_300_805_992_256;
  it('isoMicros writes the expanded year with all six fraction digits', async () => {
    const { isoMicros, isoMicrosByDate } = await import('../src/base/time.js');
    expect(isoMicros(y10000)).toBe('+010000-01-01T00:00:05.992256Z');
    expect(isoMicrosByDate(y10000)).toBe('+010000-01-01T00:00:05.992256Z');
    // Year -1 (Date.UTC(-1, 0, 1) = -62198755200000 ms), and the plain form still cached right after.
    expect(isoMicros(-62_198_755_196_750_000)).toBe('-000001-01-01T00:00:03.250000Z');
    expect(isoMicros(1_764_547_200_000_500)).toBe('2025-12-01T00:00:00.000500Z');
    expect(isoMicros(1_764_547_200_000_501)).toBe('2025-12-01T00:00:00.000501Z');
  });
  it('every -t letter prints year 10000 whole', () => {
    expect(TIME_FORMATS.map((f) => makeClock(f, y10000 - 1_500_000, 'UTC')(y10000))).toEqual([
      '+010000-01-01T00:00:05.992Z',
      '00:00:05.992',
      '+010000-01-01T00:00:05.992Z',
      '00:00:05.992',
      '+010000-01-01T00:00:05.992Z',
      '1.500',
      '253402300805.992',
    ]);
  });
});

describe('a clock that steps back inside a connection (issue 27.13)', () => {
  /**
   * Request 1 at 12:04:05.123756 (frame 4, answered .126356), then the clock steps back 20 s:
   * request 2 at 12:03:45.126456 (frame 6, client-id-after-first), answered .126556 (frame 7).
   */
  function steppedBack(): string {
    const s = new Scenario(1_764_590_645);
    s.wait(0.123_456);
    const c = s.connect({ client: '10.2.0.21:40000', broker: '10.1.0.11:9092' });
    const body = apiVersionsRequestBody({ softwareName: 'java', softwareVersion: '4.3.0' });
    const first = c.request({ apiKey: 18, apiVersion: 4, clientId: 'orders', clientInstanceId: ID_A, body });
    s.wait(0.0025);
    c.respond(first, apiVersionsResponseBody(4, { errorCode: 0, apiKeys: [] }));
    s.wait(-20);
    const second = c.request({ apiKey: 18, apiVersion: 4, clientId: 'orders', clientInstanceId: ID_A, body });
    c.respond(second, apiVersionsResponseBody(4, { errorCode: 0, apiKeys: [] }));
    return s.file('stepped-back.pcap');
  }

  it('first and last seen are the earliest and latest times, and --until keeps the connection of a finding in the window', async () => {
    const file = steppedBack();
    const all = JSON.parse((await runKcid(['analyze', file, '--format', 'json'])).stdout);
    expect(all.instances.map((i: { firstSeen: string; lastSeen: string }) => [i.firstSeen, i.lastSeen])).toEqual([['2025-12-01T12:03:45.126456Z', '2025-12-01T12:04:05.126356Z']]);
    const until = JSON.parse((await runKcid(['analyze', file, '--format', 'json', '--until', '2025-12-01T12:03:50Z'])).stdout);
    expect(until.findings.map((f: { rule: string; frame: number }) => [f.rule, f.frame])).toEqual([['client-id-after-first', 6]]);
    expect(until.connections).toHaveLength(1);
    expect(until.instances.map((i: { firstSeen: string; lastSeen: string }) => [i.firstSeen, i.lastSeen])).toEqual([['2025-12-01T12:03:45.126456Z', '2025-12-01T12:04:05.126356Z']]);
  });
});
