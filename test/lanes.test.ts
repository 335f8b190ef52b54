/**
 * `kcid requests --format ndjson` in lanes (src/report/lanes.ts): each lane follows a share of the
 * connections and the lines are merged by frame, so the output is byte for byte one thread's,
 * whatever the number of lanes: on every fixture and public capture, with and without --bodies, and
 * on a capture made so that rows wait, are answered late and are given up on across lanes.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { connectionLane } from '../src/net/shard.js';
import type { TcpSegment } from '../src/net/types.js';
import { compactString, concat, errorCodeResponseBody, int32, taggedFields } from './builder/kafka.js';
import { Scenario } from './builder/scenario.js';
import { runKcid } from './helpers.js';

const PUBLIC = '../shared/captures/public';
const FIXTURES = readdirSync('fixtures').filter((f) => /\.pcap(ng)?(\.gz)?$/.test(f)).map((f) => join('fixtures', f));
const PUBLIC_CAPTURES = existsSync(PUBLIC)
  ? readdirSync(PUBLIC, { recursive: true, encoding: 'utf8' }).filter((f) => /\.pcap(ng)?(\.gz)?$/.test(f)).map((f) => join(PUBLIC, f))
  : [];

/** Heartbeat v4's body: GroupId, GenerationId, MemberId, GroupInstanceId (null), no tags. */
const heartbeat = (member: string): Uint8Array => concat(compactString('g'), int32(1), compactString(member), compactString(null), taggedFields());

async function lines(file: string, jobs: number, extra: string[] = []): Promise<string> {
  const r = await runKcid(['requests', file, '--format', 'ndjson', '-q', '-p', '9092,9093', '--allow-empty', '-j', String(jobs), ...extra]);
  expect(r.stderr).toBe('');
  return r.stdout;
}

describe('kcid requests in lanes', () => {
  it.each([...FIXTURES, ...PUBLIC_CAPTURES])('writes what one thread writes, in 2 and 3 lanes, with and without --bodies: %s', async (file) => {
    for (const extra of [[], ['--bodies']]) {
      const one = await lines(file, 1, extra);
      expect(await lines(file, 2, extra)).toBe(one);
      expect(await lines(file, 3, extra)).toBe(one);
    }
  });

  it('writes rows that wait, are answered late or never, across lanes and across the waiting bounds', async () => {
    const s = new Scenario();
    const conns = Array.from({ length: 12 }, (_, i) => s.connect({ client: `10.9.${i}.1:${40000 + i}`, broker: `10.9.0.100:9092` }));
    const open: [number, number][] = [];
    for (let round = 0; round < 30; round++) {
      for (const [i, c] of conns.entries()) {
        const id = c.request({ apiKey: 12, apiVersion: 4, headerVersion: 2, body: heartbeat(`m${i}`) });
        // Some answered at once, some a round later, some never (given up on past MAX_WAIT_US).
        if ((round + i) % 3 === 0) c.respond(id, errorCodeResponseBody({ throttleTimeMs: 0, errorCode: 0, flexible: true }));
        else if ((round + i) % 3 === 1) open.push([i, id]);
      }
      if (round % 7 === 6) s.wait(61); // past the 60 s a row waits
      for (const [i, id] of open.splice(0, open.length / 2)) conns[i]!.respond(id, errorCodeResponseBody({ throttleTimeMs: 0, errorCode: 27, flexible: true }));
    }
    const file = s.file('lanes-waits.pcap');
    const one = await lines(file, 1);
    expect(one.split('\n').length).toBe(12 * 30 + 1);
    expect(one).toContain('"responseFrame":null');
    expect(one).toContain('"errorName":"REBALANCE_IN_PROGRESS (27)"');
    for (const jobs of [2, 3, 4, 7]) expect(await lines(file, jobs)).toBe(one);
  });

  it('says what is wrong with an input in one line, as one thread does', async () => {
    const r = await runKcid(['requests', 'package.json', '--format', 'ndjson', '-j', '2']);
    const one = await runKcid(['requests', 'package.json', '--format', 'ndjson', '-j', '1']);
    expect([r.code, r.stderr]).toEqual([one.code, one.stderr]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });
});

describe('connectionLane', () => {
  const segment = (src: number[], dst: number[], sp: number, dp: number): TcpSegment => {
    const data = Buffer.from([...src, ...dst]);
    return { ipVersion: src.length === 4 ? 4 : 6, data, srcAddrOff: 0, dstAddrOff: src.length, srcPort: sp, dstPort: dp } as TcpSegment;
  };
  it('puts both directions of a connection in one lane, and spreads connections over the lanes', () => {
    const counts = [0, 0, 0];
    for (let i = 0; i < 3000; i++) {
      const a = [10, 1, (i >> 8) & 255, i & 255];
      const b = [10, 0, 0, 1 + (i % 3)];
      const lane = connectionLane(segment(a, b, 30000 + (i % 5000), 9092), 3);
      expect(connectionLane(segment(b, a, 9092, 30000 + (i % 5000)), 3)).toBe(lane);
      counts[lane]!++;
    }
    for (const n of counts) expect(n).toBeGreaterThan(850);
    const v6a = Array.from({ length: 16 }, (_, i) => i);
    const v6b = Array.from({ length: 16 }, (_, i) => 255 - i);
    expect(connectionLane(segment(v6a, v6b, 1, 2), 4)).toBe(connectionLane(segment(v6b, v6a, 2, 1), 4));
  });
});
