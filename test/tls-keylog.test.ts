/**
 * Key logs read as a stream into a compact store, shared with --jobs workers, an over-long line one
 * error (issue 26 item 7). Lines are written here; what lookup must return is the last line for each
 * (random, label), as the old Map of strings gave, computed here from the text.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { analyzeAll } from '../src/analysis/parallel.js';
import { KeyLog, MAX_KEYLOG_LINE } from '../src/tls/keylog.js';
import { tmpDir, tmpFile } from './builder/capture.js';
import { requestFrame } from './builder/kafka.js';
import { Scenario } from './builder/scenario.js';
import { CONTENT, Tls13Session } from './builder/tls.js';
import { DEFAULTS, runKcid } from './helpers.js';

const hex = (n: number, bytes: number) => {
  let s = '';
  for (let i = 0; i < bytes; i++) s += (((n * 2654435761 + i * 40503) >>> (i % 24)) & 0xff).toString(16).padStart(2, '0');
  return s;
};
const LABELS = ['CLIENT_RANDOM', 'CLIENT_HANDSHAKE_TRAFFIC_SECRET', 'SERVER_HANDSHAKE_TRAFFIC_SECRET', 'CLIENT_TRAFFIC_SECRET_0', 'SERVER_TRAFFIC_SECRET_0'];

describe('key log store', () => {
  it('20,000 lines across 1 MiB read chunks, CRLF, comments, other labels and repeats: lookups give the last secret of each label, compactly', () => {
    const lines: string[] = [];
    const want = new Map<string, Map<string, string>>();
    for (let i = 0; i < 20_000; i++) {
      const random = hex(i % 9000, 32);
      const label = LABELS[i % 5]!;
      const secret = hex(i, i % 3 === 0 ? 48 : 32);
      lines.push(`${label} ${i % 2 ? random.toUpperCase() : random} ${secret}${i % 7 === 0 ? '\r' : ''}`);
      if (!want.has(random)) want.set(random, new Map());
      want.get(random)!.set(label, secret);
      if (i % 1000 === 0) lines.push('# a comment', '', `EXPORTER_SECRET ${random} ${secret}`, 'not a key log line');
    }
    const path = tmpFile('many.keys', lines.join('\n'));
    const log = KeyLog.readFiles([path]);
    expect(log.sources).toEqual([{ name: path, skipped: 20, entries: 20_000, matched: 0 }]);
    expect(log.size).toBe(9000);
    for (const [random, secrets] of want) {
      const got = log.lookup(Buffer.from(random, 'hex'))!;
      expect(Object.fromEntries([...got].map(([k, v]) => [k, v.toString('hex')]))).toEqual(Object.fromEntries(secrets));
    }
    expect(log.lookup(Buffer.alloc(32, 0xee))).toBeUndefined();
    expect(log.sources[0]!.matched).toBe(9000);
    // Compact: 34 bytes a line plus its secret's bytes (a third of them 48, the rest 32), nothing else in the slab.
    const shared = KeyLog.readFiles([path], true).share();
    const third = Math.ceil(20_000 / 3);
    expect(shared.files[0]!.slab.byteLength).toBe(20_000 * 34 + third * 48 + (20_000 - third) * 32);
    expect(shared.files[0]!.count).toBe(20_000);
  });

  it('shared with workers: the same lookups over shared memory, each analysis counting its own matches', () => {
    const random = hex(1, 32);
    const path = tmpFile('one.keys', `CLIENT_RANDOM ${random} ${hex(2, 48)}\nCLIENT_RANDOM ${hex(3, 32)} ${hex(4, 48)}\n`);
    const shared = KeyLog.readFiles([path], true).share();
    expect(shared.files[0]!.slab).toBeInstanceOf(SharedArrayBuffer);
    const a = KeyLog.fromShared(shared);
    const b = KeyLog.fromShared(shared);
    expect(a.lookup(Buffer.from(random, 'hex'))!.get('CLIENT_RANDOM')!.toString('hex')).toBe(hex(2, 48));
    expect([a.sources[0]!.matched, b.sources[0]!.matched]).toEqual([1, 0]);
    expect(b.sources[0]).toEqual({ name: path, skipped: 0, entries: 2, matched: 0 });
  });

  it(`a line longer than ${MAX_KEYLOG_LINE} bytes is one error (exit 2), in the middle of a file and at its end`, async () => {
    const s = new Scenario();
    s.connect({ client: '10.9.0.1:50001', broker: '10.9.0.2:9092' }).close();
    const capture = s.file('plain.pcap');
    const long = tmpFile('long.keys', `CLIENT_RANDOM ${hex(1, 32)} ${hex(2, 48)}\n${'#'.repeat(600_000)}\nCLIENT_RANDOM ${hex(3, 32)} ${hex(4, 48)}\n`);
    const out = await runKcid(['analyze', '--tls-keylog', long, capture]);
    expect([out.code, out.stderr]).toEqual([2, `kcid: --tls-keylog ${long}: line 2 is longer than ${MAX_KEYLOG_LINE} bytes (no key log line is)\n`]);
    const tail = tmpFile('tail.keys', 'x'.repeat(MAX_KEYLOG_LINE + 1));
    expect((await runKcid(['analyze', '--tls-keylog', tail, capture])).stderr).toBe(`kcid: --tls-keylog ${tail}: line 1 is longer than ${MAX_KEYLOG_LINE} bytes (no key log line is)\n`);
    const fits = tmpFile('fits.keys', `${'#'.repeat(MAX_KEYLOG_LINE)}\n`);
    expect((await runKcid(['analyze', '--tls-keylog', fits, capture, '--allow-empty'])).code).toBe(0);
  });

  it('read once for every input and worker: a key log on a FIFO, which can be read only once, decrypts two captures with -j 2', async () => {
    const captures: string[] = [];
    let keylog = '';
    for (const n of [1, 2]) {
      const tls = new Tls13Session();
      const s = new Scenario();
      const conn = s.connect({ client: `10.9.0.${n}:50001`, broker: '10.9.0.9:9092' });
      conn.clientBytes(tls.clientFirst());
      conn.serverBytes(tls.serverFlight());
      conn.clientBytes(tls.clientFinished());
      conn.clientBytes(tls.client.seal(CONTENT.APPLICATION_DATA, Buffer.from(requestFrame({ apiKey: 18, apiVersion: 3, correlationId: n, clientId: `c${n}`, body: Buffer.from('0a6b6369642d7465737405302e312e3000', 'hex') }))));
      conn.close();
      captures.push(s.file(`fifo-${n}.pcap`));
      keylog += tls.keylog;
    }
    const fifo = join(tmpDir(), 'keys.fifo');
    await new Promise<void>((resolve, reject) => execFile('mkfifo', [fifo], (e) => (e ? reject(e) : resolve())));
    // One writer, once: a second open of the FIFO for reading would wait for ever.
    const writer = new Promise<void>((resolve) => execFile('sh', ['-c', 'cat "$1" > "$2"', 'sh', tmpFile('fifo-src.keys', keylog), fifo], () => resolve()));
    const summary = await analyzeAll(captures, { ...DEFAULTS, tlsKeylogs: [fifo] }, 2);
    await writer;
    expect(summary.connections.map((c) => [c.client, c.tls?.decrypted ?? null, c.clientIds])).toEqual([
      ['10.9.0.1:50001', true, ['c1']],
      ['10.9.0.2:50001', true, ['c2']],
    ]);
  }, 20_000);
});

