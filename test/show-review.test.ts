/**
 * kcid show, second reading (review-show): cases a review's experiments found wrong, each a failing
 * test before its fix.
 */
import { describe, expect, it } from 'vitest';
import { array, compactArray, compactString, concat, int16, int32, int64, int8, string, taggedFields, uvarint, varint } from './builder/kafka.js';
import { crc32c } from '../src/show/crc32c.js';
import { Scenario } from './builder/scenario.js';
import { runKcid } from './helpers.js';

const enc = new TextEncoder();

describe('kcid show, review cases', () => {
  it('SaslHandshake v0: the headerless PLAIN token that follows is a secret, shown as its length, masked in the hex dump', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    const hc = c.request({ apiKey: 17, apiVersion: 0, clientId: 'app', body: string('PLAIN') });
    c.respond(hc, concat(int16(0), array(['PLAIN'], string)));
    // KIP-43: after a v0 handshake the token travels bare: size, then authzid NUL user NUL password.
    const token = enc.encode('\0alice\0hunter2-password');
    c.clientBytes(concat(int32(token.length), token));
    const tokenFrame = s.frames.length;
    c.serverBytes(int32(0));
    const answerFrame = s.frames.length;
    // The next request is framed as a request again.
    c.request({ apiKey: 3, apiVersion: 1, correlationId: 2, clientId: 'app', body: array(['t'], string) });
    const nextFrame = s.frames.length;
    const file = s.file();
    for (const format of ['text', 'json']) {
      const r = await runKcid(['show', file, String(tokenFrame), '--format', format]);
      expect(r.code).toBe(0);
      for (const leak of ['hunter2', 'alice', Buffer.from('hunter2').toString('hex'), '68 75 6e 74']) expect(r.stdout, format).not.toContain(leak);
    }
    const doc = JSON.parse((await runKcid(['show', file, String(tokenFrame), '--format', 'json'])).stdout) as { messages: { kind: string; error: unknown; tree: { children: { path: string; offset: number; length: number; type: string; value: unknown; hidden?: string }[] } }[] };
    const msg = doc.messages[0]!;
    expect(msg.kind).toBe('request');
    expect(msg.error).toBeNull();
    expect(msg.tree.children.map((n) => [n.path, n.offset, n.length, n.type, n.value, n.hidden ?? null])).toEqual([
      ['size', 0, 4, 'int32', token.length, null],
      ['token', 4, token.length, 'bytes', `${token.length} bytes`, 'secret'],
    ]);
    const text = (await runKcid(['show', file, String(tokenFrame)])).stdout;
    expect(text).toContain('SASL token');
    expect(text).toMatch(/0000 \|00 00 00 17\|\*\* \*\* .*\.\.\.\.\*\*\*\*/);
    const answer = JSON.parse((await runKcid(['show', file, String(answerFrame), '--format', 'json'])).stdout) as typeof doc;
    expect(answer.messages[0]!.kind).toBe('response');
    expect(answer.messages[0]!.tree.children.map((n) => [n.path, n.length])).toEqual([['size', 4], ['token', 0]]);
    const next = JSON.parse((await runKcid(['show', file, String(nextFrame), '--format', 'json'])).stdout) as { messages: { apiKey: number; error: unknown }[] };
    expect(next.messages.map((m) => [m.apiKey, m.error])).toEqual([[3, null]]);
  });

  it('a batch of 200,000 records: summarised (not a stack overflow from spreading their sizes)', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092', mss: 60000 });
    const n = 200_000;
    // The smallest record: length 6, attributes, timestampDelta 0, offsetDelta 0, null key, null value, no headers.
    const rec = concat(varint(6), int8(0), varint(0), varint(0), varint(-1), varint(-1), varint(0));
    const recs = new Uint8Array(rec.length * n);
    for (let i = 0; i < n; i++) recs.set(rec, i * rec.length);
    const afterCrc = concat(int16(0), int32(n - 1), int64(1000n), int64(1000n), int64(-1n), int16(-1), int32(-1), int32(n), recs);
    const batch = concat(int64(0n), int32(4 + 1 + 4 + afterCrc.length), int32(0), int8(2), int32(crc32c(afterCrc) | 0), afterCrc);
    const produce = concat(string(null), int16(1), int32(1000), array([0], () => concat(string('t'), array([0], () => concat(int32(0), int32(batch.length), batch)))));
    c.request({ apiKey: 0, apiVersion: 3, clientId: 'app', body: produce });
    const r = await runKcid(['show', s.file(), String(s.frames.length)]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('records: 200000 records, 7 bytes each <records>');
    expect(r.stdout).toContain('records[1000..199999]: 199000 more records, not listed');
  });

  it('a 4 MB message: its 262,144 hex dump rows printed (not a stack overflow from spreading them)', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092', mss: 60000 });
    // ApiVersions v0 (an empty body) followed by 4 MiB - 12 bytes Kafka ignores.
    const size = 4 * 1024 * 1024;
    c.request({ apiKey: 18, apiVersion: 0, clientId: null, body: new Uint8Array(size - 4 - 10) });
    const r = await runKcid(['show', s.file(), String(s.frames.length)]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const rows = r.stdout.split('\n').filter((l) => /^[0-9a-f]{4,} /.test(l));
    expect(rows).toHaveLength(size / 16);
    expect(rows[rows.length - 1]).toMatch(/^3ffff0  00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00  \.{16}$/);
  });

  it('a frame past the end of the capture: one line, exit 2 (a bad frame, as the usage says)', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    c.request({ apiKey: 18, apiVersion: 0, clientId: null });
    const file = s.file();
    for (const frame of ['5', '99999999999']) {
      const r = await runKcid(['show', file, frame]);
      expect([r.code, r.stdout, r.stderr]).toEqual([2, '', `kcid: frame ${frame}: ${file} has 4 frames\n`]);
    }
    const last = await runKcid(['show', file, '4']);
    expect(last.code).toBe(0);
  });

  it('a tagged string quoting a token the connection sent: hidden on the tag node too, not only on its value', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    const auth = enc.encode('\0alice\0hunter2-password');
    c.request({ apiKey: 36, apiVersion: 2, clientId: 'app', body: concat(uvarint(auth.length + 1), auth, taggedFields()) });
    // Fetch v12: ..., RackId, then tag 0 ClusterId (a compact nullable string) quoting the password.
    const fetch = concat(int32(-1), int32(500), int32(1), int32(1024), int8(0), int32(0), int32(-1), compactArray([], () => new Uint8Array(0)), compactArray([], () => new Uint8Array(0)), compactString(''), taggedFields([{ tag: 0, bytes: compactString('hunter2-password') }]));
    c.request({ apiKey: 1, apiVersion: 12, clientId: 'app', body: fetch });
    const file = s.file();
    for (const format of ['text', 'json']) {
      const r = await runKcid(['show', file, String(s.frames.length), '--format', format]);
      expect(r.stdout).toContain('ClusterId');
      expect(r.stdout, format).not.toContain('hunter2');
    }
  });
});
