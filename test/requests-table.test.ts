/**
 * `kcid requests` as a table: it fits a terminal at any width without wrapping a row, and into a
 * pipe every value is whole. Rendered through the table's width (a fake terminal in-process) and
 * through a real pseudo-terminal (`script` from util-linux), compared as exact text.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Scenario } from './builder/scenario.js';
import { apiVersionsRequestBody, errorCodeResponseBody, int16, int32, concat, responseFrame } from './builder/kafka.js';
import { checkGolden, golden, HAVE_SCRIPT, NO_SCRIPT, runKcid, skipUnless } from './helpers.js';
import { ID_A } from './helpers.js';

const LONG_ID = 'consumer-console-consumer-84107-1';

/** Two connections: one whose ApiVersions is refused (UNSUPPORTED_VERSION) and a Metadata; one seen mid-way, a response first. */
function capture(): string {
  const s = new Scenario();
  const c = s.connect({ client: '10.33.33.11:33118', broker: '10.33.33.12:9092' });
  c.respond(c.request({ apiKey: 18, apiVersion: 4, clientId: LONG_ID, headerVersion: 2, clientInstanceId: ID_A, body: apiVersionsRequestBody({ softwareName: 'apache-kafka-java', softwareVersion: '4.3.0' }) }), errorCodeResponseBody({ errorCode: 35, flexible: false }));
  c.respond(c.request({ apiKey: 3, apiVersion: 12, headerVersion: 2, clientInstanceId: ID_A }));
  const late = s.connect({ client: '10.33.33.13:40000', broker: '10.33.33.12:9092', handshake: false });
  late.serverBytes(responseFrame({ correlationId: 41, headerVersion: 0, body: concat(int16(0), int32(0)) }));
  late.respond(late.request({ apiKey: 18, apiVersion: 3, correlationId: 42, clientId: 'late-client', body: apiVersionsRequestBody({ softwareName: 'x', softwareVersion: '1' }) }), errorCodeResponseBody({ errorCode: 0, flexible: false }));
  return s.file('requests-table.pcap');
}

/** Characters, not UTF-16 units or bytes ("…" is one column). */
const widthOf = (line: string) => [...line].length;

describe('kcid requests table', () => {
  it('into a pipe: every column, no value cut, so grep finds whole ClientIds', async () => {
    const r = await runKcid(['requests', capture()]);
    checkGolden('requests-table.pipe.txt', r.stdout);
    expect(r.stdout.split('\n').filter((l) => l.includes(LONG_ID))).toHaveLength(1);
    expect(r.stdout).toContain('UNSUPPORTED_VERSION (35)');
  });

  it.each([80, 120, 160, 200])('on a terminal of %i columns: fits, rows never wrap, a line says what is not shown', async (columns) => {
    const r = await runKcid(['requests', capture()], { tty: true, columns });
    checkGolden(`requests-table.${columns}.txt`, r.stdout);
    // Every line, the one that says what is not shown too.
    for (const line of r.stdout.trimEnd().split('\n')) expect(widthOf(line)).toBeLessThanOrEqual(columns);
  });

  it('lists a response whose request was not captured, marked, and counts it', async () => {
    const r = await runKcid(['requests', capture(), '--format', 'ndjson']);
    const rows = r.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(rows.map((x) => [x.frame, x.apiName, x.correlationId, x.responseFrame, x.requestCaptured])).toEqual([
      [4, 'ApiVersions', 1, 5, true],
      [6, 'Metadata', 2, 7, true],
      [8, null, 41, 8, false],
      [9, 'ApiVersions', 42, 10, true],
    ]);
    const table = (await runKcid(['requests', capture()])).stdout;
    expect(table.trimEnd().split('\n').at(-1)).toBe('3 requests, 1 response whose request was not captured');
    // --api picks requests; a response without its request names no API.
    expect((await runKcid(['requests', capture(), '--api', 'ApiVersions'])).stdout.trimEnd().split('\n').at(-1)).toBe('2 requests');
  });

  it.each([
    ['ad', '2025-12-01T00:00:00.000Z'],
    ['ud', '2025-12-01T00:00:00.000Z'],
    ['a', '00:00:00.000'],
    ['u', '00:00:00.000'],
    ['r', '0.000'],
    ['e', '1764547200.000'],
  ])('-t %s shows times as %s', async (format, first) => {
    const r = await runKcid(['requests', capture(), '-t', format]);
    expect(r.stdout.split('\n')[1]).toMatch(new RegExp(`^ +4  ${first.replace(/\./g, '\\.')} `));
  });

  it('-t l shows local time with its offset, in the zone TZ names', async () => {
    const paris = await runKcid(['requests', capture(), '-t', 'l'], { env: { TZ: 'Europe/Paris' } });
    expect(paris.stdout.split('\n')[1]).toMatch(/^ +4  2025-12-01T01:00:00\.000\+01:00  10\.33/);
    const ny = await runKcid(['requests', capture(), '-t', 'l'], { env: { TZ: 'America/New_York' } });
    expect(ny.stdout.split('\n')[1]).toMatch(/^ +4  2025-11-30T19:00:00\.000-05:00  10\.33/);
    expect(await runKcid(['requests', capture(), '-t', 'l'], { env: { TZ: 'Mars/Olympus' } })).toMatchObject({
      code: 2,
      stderr: 'kcid: unknown time zone TZ=Mars/Olympus (expected a name such as Europe/Paris or UTC)\n',
    });
    expect((await runKcid(['requests', capture(), '-t', 'x'])).code).toBe(2);
  });

  it('several inputs: a legend numbers them, frames show as input:frame, JSON input is the same number', async () => {
    const file = capture();
    const other = new Scenario();
    const c = other.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    c.respond(c.request({ apiKey: 18, apiVersion: 3, clientId: 'app', body: apiVersionsRequestBody({ softwareName: 'x', softwareVersion: '1' }) }), errorCodeResponseBody({ errorCode: 0, flexible: false }));
    const second = other.file('second.pcap');
    const lines = (await runKcid(['requests', file, second])).stdout.split('\n');
    expect(lines.slice(0, 2)).toEqual([`[1] ${file}`, `[2] ${second}`]);
    expect(lines.find((l) => l.includes('10.0.0.1:50000'))).toMatch(/^ +2:4  .*  2:5  NONE \(0\) /);
    const json = (await runKcid(['requests', file, second, '--format', 'ndjson'])).stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as { input: number });
    expect(json.map((x) => x.input)).toEqual([1, 1, 1, 1, 2]);
  });

  it('through a real pseudo-terminal: the same text at 80 and 120 columns', skipUnless(HAVE_SCRIPT, NO_SCRIPT), async () => {
    const file = capture();
    for (const columns of [80, 120]) {
      const r = spawnSync('script', ['-qc', `stty cols ${columns} rows 50; exec "${process.execPath}" bin/kcid requests ${file}`, '/dev/null'], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
      expect(r.stdout.replace(/\r\n/g, '\n')).toBe(readFileSync(golden(`requests-table.${columns}.txt`), 'utf8'));
    }
  });
});
