/**
 * TLS capture gaps and key stages (issue 27, items 2 and 3), with sessions made up byte by byte in
 * test/builder/tls.ts, whose keys come from node:crypto's HMAC (checked here against RFC 8448), not
 * from src/tls/keys.ts. Most tests drive a TlsSession directly and count what it hands on: every
 * plaintext byte sent is either delivered or reported in a gap, exactly.
 */
import { createCipheriv, type CipherGCM } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { KeyLog } from '../src/tls/keylog.js';
import { TlsSession, type TlsOutput, type TlsSide } from '../src/tls/session.js';
import { requestFrame } from './builder/kafka.js';
import { Scenario } from './builder/scenario.js';
import { tmpFile } from './builder/capture.js';
import { clientHello, CONTENT, handshake, hkdfExpandLabel, prf12, record, serverHello, Tls13Session, u8, vec } from './builder/tls.js';
import { brief, runKcid, analyzeFiles } from './helpers.js';

class Collect implements TlsOutput {
  readonly plain: [Buffer[], Buffer[]] = [[], []];
  readonly gaps: [number[], number[]] = [[], []];
  readonly notes: string[] = [];
  plaintext(side: TlsSide, buf: Buffer, off: number, len: number): void {
    this.plain[side].push(Buffer.from(buf.subarray(off, off + len)));
  }
  plaintextGap(side: TlsSide, bytes: number): void {
    this.gaps[side].push(bytes);
  }
  note(kind: string, side: TlsSide, _frame: number, message: string): void {
    this.notes.push(`${kind} ${side}: ${message}`);
  }
  bytes(side: TlsSide): number {
    return this.plain[side].reduce((n, b) => n + b.length, 0);
  }
  lost(side: TlsSide): number {
    return this.gaps[side].reduce((n, b) => n + b, 0);
  }
}

/** A TLS 1.3 session after both Finished messages, fed to a TlsSession with its key log. */
function started(o: { clientFinished?: boolean } = {}) {
  const tls = new Tls13Session();
  const out = new Collect();
  const keys = new KeyLog();
  keys.add('test', tls.keylog);
  const session = new TlsSession(out, keys);
  let frame = 1;
  const feed = (side: TlsSide, b: Buffer): void => session.data(side, b, 0, b.length, frame++, 0, 0);
  feed(0, tls.clientFirst());
  feed(1, tls.serverFlight());
  if (o.clientFinished !== false) feed(0, tls.clientFinished());
  return { tls, out, session, feed, gap: (side: TlsSide, n: number) => session.gap(side, n, frame++) };
}

/** `n` bytes of plaintext that say where they are (byte i is i mod 251). */
const counting = (n: number, from = 0): Buffer => Buffer.from(Array.from({ length: n }, (_, i) => (from + i) % 251));

describe('the test keys: HKDF-Expand-Label written from RFC 8446 §7.1 and RFC 5869', () => {
  it('gives RFC 8448 §3 handshake keys from the server handshake traffic secret', () => {
    const secret = Buffer.from('b67b7d690cc16c4e75e54213cb2d37b4e9c912bcded9105d42befd59d391ad38', 'hex');
    expect(hkdfExpandLabel('sha256', secret, 'key', Buffer.alloc(0), 16).toString('hex')).toBe('3fce516009c21727d0f2e4e86ee403bc');
    expect(hkdfExpandLabel('sha256', secret, 'iv', Buffer.alloc(0), 12).toString('hex')).toBe('5d313eb2671276ee13000b30');
  });
});

describe('TLS 1.3 capture gaps: the plaintext lost is counted exactly', () => {
  it('6,000 bytes in records of 1,000, a 100-byte gap over a record header: delivered plus reported is 6,000', () => {
    const m = started();
    const records = Array.from({ length: 6 }, (_, i) => m.tls.client.seal(CONTENT.APPLICATION_DATA, counting(1000, i * 1000)));
    const stream = Buffer.concat(records);
    // Record 3 starts at 2 * 1022 = 2044: the gap [2000, 2100) takes the end of record 2 and the header of record 3.
    m.feed(0, stream.subarray(0, 2000));
    m.gap(0, 100);
    m.feed(0, stream.subarray(2100));
    m.session.end();
    expect(m.out.bytes(0)).toBe(4000);
    expect(m.out.gaps[0]).toEqual([2000]);
    expect(Buffer.concat(m.out.plain[0])).toEqual(Buffer.concat([counting(1000), counting(3000, 3000)]));
    expect(m.out.notes).toEqual([
      'tls-record 0: a capture gap of 100 bytes took TLS record boundaries from the client: kcid resumes at the next record that decrypts',
      "tls-record 0: kcid found the client's TLS records again after the capture gap: 2 records (2,044 bytes, 2,000 of plaintext) lost",
    ]);
  });

  it('a gap at every offset of a record header (and around it): every byte is delivered or reported', () => {
    for (let start = 1010; start <= 1030; start++) {
      for (const size of [1, 4, 5, 6, 30]) {
        const m = started();
        const stream = Buffer.concat(Array.from({ length: 4 }, (_, i) => m.tls.client.seal(CONTENT.APPLICATION_DATA, counting(1000, i * 1000))));
        m.feed(0, stream.subarray(0, start));
        m.gap(0, size);
        m.feed(0, stream.subarray(start + size));
        m.session.end();
        expect([start, size, m.out.bytes(0) + m.out.lost(0)]).toEqual([start, size, 4000]);
        // Records 3 and 4 always decrypt.
        expect(Buffer.concat(m.out.plain[0]).subarray(-2000)).toEqual(counting(2000, 2000));
      }
    }
  });

  it('a second gap while kcid looks for the next record is counted too', () => {
    const m = started();
    const stream = Buffer.concat(Array.from({ length: 6 }, (_, i) => m.tls.client.seal(CONTENT.APPLICATION_DATA, counting(1000, i * 1000))));
    m.feed(0, stream.subarray(0, 1000));
    m.gap(0, 100); // over record 2's header (at 1022)
    m.feed(0, stream.subarray(1100, 1500));
    m.gap(0, 700); // over record 3's header (at 2044)
    m.feed(0, stream.subarray(2200));
    m.session.end();
    expect(m.out.bytes(0)).toBe(3000);
    expect(m.out.gaps[0]).toEqual([3000]);
    expect(m.out.notes[1]).toBe("tls-record 0: kcid found the client's TLS records again after the capture gap: 3 records (3,066 bytes, 3,000 of plaintext) lost");
  });

  it('a gap that ends inside the record being skipped, then one past it', () => {
    const m = started();
    const stream = Buffer.concat(Array.from({ length: 4 }, (_, i) => m.tls.client.seal(CONTENT.APPLICATION_DATA, counting(1000, i * 1000))));
    m.feed(0, stream.subarray(0, 1100));
    m.gap(0, 100); // inside record 2: skipped, 1,000 bytes of plaintext reported
    m.feed(0, stream.subarray(1200, 1300));
    m.gap(0, 800); // the rest of record 2 and record 3's header
    m.feed(0, stream.subarray(2100));
    m.session.end();
    expect(m.out.bytes(0) + m.out.lost(0)).toBe(4000);
    expect(m.out.gaps[0]).toEqual([1000, 1000]);
  });

  it('end to end: a 50 KB request in four records and two ApiVersions, a segment lost over a record header: requests 1, 2 and 3', async () => {
    const tls = new Tls13Session();
    const s = new Scenario();
    const conn = s.connect({ client: '10.9.0.1:50001', broker: '10.9.0.2:9092', mss: 1460 });
    conn.clientBytes(tls.clientFirst());
    conn.serverBytes(tls.serverFlight());
    conn.clientBytes(tls.clientFinished());
    const big = Buffer.from(requestFrame({ apiKey: 3, apiVersion: 12, correlationId: 1, clientId: null, body: Buffer.alloc(50_000, 7) }));
    const body = Buffer.from('0a6b6369642d7465737405302e312e3000', 'hex');
    const small = (c: number): Buffer => Buffer.from(requestFrame({ apiKey: 18, apiVersion: 3, correlationId: c, clientId: 'gap', body }));
    const records = [0, 1, 2, 3].map((i) => tls.client.seal(CONTENT.APPLICATION_DATA, big.subarray(i * 12_600, (i + 1) * 12_600)));
    records.push(tls.client.seal(CONTENT.APPLICATION_DATA, small(2)), tls.client.seal(CONTENT.APPLICATION_DATA, small(3)));
    const stream = Buffer.concat(records);
    const before = s.frames.length;
    conn.clientBytes(stream);
    // The segment holding record 3's header (at 2 * (12,600 + 22) = 25,244) is lost.
    s.frames.splice(before + Math.floor(25_244 / 1460), 1);
    conn.close();
    const capture = s.file('tls-gap-50k.pcap');
    const keys = tmpFile('tls-gap-50k.keys', tls.keylog);
    const out = await runKcid(['requests', '--format', 'ndjson', '--tls-keylog', keys, capture]);
    const rows = out.stdout.trim().split('\n').map((l) => JSON.parse(l) as { correlationId: number });
    expect(rows.map((r) => r.correlationId)).toEqual([1, 2, 3]);
  });
});

describe('TLS 1.3 key stages', () => {
  it("the client's Finished lost: its application records are tried under traffic secret 0 and decrypt", () => {
    const m = started({ clientFinished: false });
    const finished = m.tls.clientFinished();
    m.feed(0, finished.subarray(0, 6 + 10)); // the ChangeCipherSpec and part of the Finished record
    m.gap(0, finished.length - 16);
    for (let i = 0; i < 3; i++) m.feed(0, m.tls.client.seal(CONTENT.APPLICATION_DATA, counting(100, i * 100)));
    m.session.end();
    expect(Buffer.concat(m.out.plain[0])).toEqual(counting(300));
    expect(m.out.notes.filter((n) => n.startsWith('tls-auth'))).toEqual([]);
  });

  it('a KeyUpdate lost in a gap inside its record: the next generation is tried and decrypts', () => {
    const m = started();
    m.feed(0, m.tls.client.seal(CONTENT.APPLICATION_DATA, counting(100)));
    const ku = m.tls.client.keyUpdate();
    m.feed(0, ku.subarray(0, 8));
    m.gap(0, ku.length - 8);
    m.feed(0, m.tls.client.seal(CONTENT.APPLICATION_DATA, counting(100, 100)));
    m.feed(0, m.tls.client.seal(CONTENT.APPLICATION_DATA, counting(100, 200)));
    m.session.end();
    expect(Buffer.concat(m.out.plain[0])).toEqual(counting(300));
    expect(m.out.notes.filter((n) => n.startsWith('tls-auth'))).toEqual([]);
  });

  it('a KeyUpdate and the 8 records after it each lost in a gap inside: the next generation is tried at every number those records took', () => {
    const m = started();
    // Each record's header is read and the rest lost: kcid counts 9 records lost (the KeyUpdate and 8 of
    // generation 1), so the first record it reads is generation 1's number 8.
    const lost = [m.tls.client.keyUpdate(), ...Array.from({ length: 8 }, (_, i) => m.tls.client.seal(CONTENT.APPLICATION_DATA, counting(100, i * 100)))];
    for (const r of lost) {
      m.feed(0, r.subarray(0, 8));
      m.gap(0, r.length - 8);
    }
    m.feed(0, m.tls.client.seal(CONTENT.APPLICATION_DATA, counting(100, 800)));
    m.feed(0, m.tls.client.seal(CONTENT.APPLICATION_DATA, counting(100, 900)));
    m.session.end();
    // The KeyUpdate's 5 bytes of handshake are reported as plaintext lost too (its type is hidden until it decrypts).
    expect(m.out.gaps[0]).toEqual([5, 100, 100, 100, 100, 100, 100, 100, 100]);
    expect(Buffer.concat(m.out.plain[0])).toEqual(counting(200, 800));
    expect(m.out.notes.filter((n) => n.startsWith('tls-auth'))).toEqual([]);
  });

  it('a KeyUpdate and the record after it lost over record headers: the search finds generation 1', () => {
    const m = started();
    m.feed(0, m.tls.client.seal(CONTENT.APPLICATION_DATA, counting(100)));
    const stream = Buffer.concat([m.tls.client.keyUpdate(), ...[1, 2, 3].map((i) => m.tls.client.seal(CONTENT.APPLICATION_DATA, counting(100, i * 100)))]);
    // KeyUpdate record: 5 + 5 + 1 + 16 = 27 bytes; then records of 122. Lost: [0, 60), the KeyUpdate and record 2's header.
    m.gap(0, 60);
    m.feed(0, stream.subarray(60));
    m.session.end();
    expect(Buffer.concat(m.out.plain[0])).toEqual(Buffer.concat([counting(100), counting(200, 200)]));
    expect(m.out.notes.filter((n) => n.startsWith('tls-auth') || n.includes('not read'))).toEqual([]);
  });

  it('a post-handshake Finished (client authentication, RFC 8446 §4.6.2) changes no keys', () => {
    const m = started();
    m.feed(0, m.tls.client.seal(CONTENT.APPLICATION_DATA, counting(100)));
    // Certificate (empty), Finished: under the client's application traffic secret.
    m.feed(0, m.tls.client.seal(CONTENT.HANDSHAKE, Buffer.concat([handshake(11, Buffer.concat([vec(1), vec(3)])), handshake(20, Buffer.alloc(32, 0xf7))])));
    for (let i = 1; i < 4; i++) m.feed(0, m.tls.client.seal(CONTENT.APPLICATION_DATA, counting(100, i * 100)));
    m.session.end();
    expect(Buffer.concat(m.out.plain[0])).toEqual(counting(400));
    expect(m.out.notes).toEqual([]);
  });

  it('a wrong traffic secret still fails, one finding and a count', () => {
    const tls = new Tls13Session();
    const out = new Collect();
    const keys = new KeyLog();
    keys.add('test', tls.keylog.replace(/^(CLIENT_TRAFFIC_SECRET_0 \S+ )33/m, '$134'));
    const session = new TlsSession(out, keys);
    const all = [tls.clientFirst(), tls.serverFlight(), tls.clientFinished()];
    session.data(0, all[0]!, 0, all[0]!.length, 1, 0, 0);
    session.data(1, all[1]!, 0, all[1]!.length, 2, 0, 0);
    session.data(0, all[2]!, 0, all[2]!.length, 3, 0, 0);
    for (let i = 0; i < 3; i++) {
      const r = tls.client.seal(CONTENT.APPLICATION_DATA, counting(100));
      session.data(0, r, 0, r.length, 4 + i, 0, 0);
    }
    session.end();
    expect(out.bytes(0)).toBe(0);
    expect(out.notes).toEqual([
      'tls-auth 0: a TLS record from the client failed authentication (frame 4): wrong key, or the capture is damaged; skipped',
      'tls-auth 0: 2 more TLS records from the client failed authentication',
    ]);
  });
});

describe('TLS 1.2 records and handshake', () => {
  const clientRandom = Buffer.alloc(32, 0xa1);
  const serverRandom = Buffer.alloc(32, 0xb2);
  const hello12 = (): [Buffer, Buffer] => [
    record(CONTENT.HANDSHAKE, clientHello({ random: clientRandom, versions: [0x0303] }), 0x0301),
    record(CONTENT.HANDSHAKE, serverHello({ random: serverRandom, cipher: 0xc02f, version: 0x0303 })),
  ];

  it('a record of 2^14 + 2048 bytes is within TLS 1.2 (RFC 5246 §6.2.3); one byte more is skipped', () => {
    const out = new Collect();
    const session = new TlsSession(out, null);
    const [ch, sh] = hello12();
    session.data(0, ch, 0, ch.length, 1, 0, 0);
    session.data(1, sh, 0, sh.length, 2, 0, 0);
    const ok = record(CONTENT.HANDSHAKE, Buffer.concat([handshake(99, Buffer.alloc(16384 + 2048 - 4))]));
    const over = record(CONTENT.HANDSHAKE, Buffer.alloc(16384 + 2049));
    session.data(1, ok, 0, ok.length, 3, 0, 0);
    session.data(1, over, 0, over.length, 4, 0, 0);
    session.end();
    expect(out.notes.filter((n) => n.startsWith('tls-record'))).toEqual([
      'tls-record 1: a TLS record from the broker is 18433 bytes, more than the 18,432 TLS 1.2 allows: skipped',
    ]);
  });

  it('a Certificate split over three records, the middle one damaged by a gap: not rebuilt with a hole', async () => {
    const s = new Scenario();
    const conn = s.connect({ client: '10.9.0.1:50001', broker: '10.9.0.2:9092' });
    const [ch, sh] = hello12();
    const certificate = handshake(11, vec(3, vec(3, Buffer.alloc(300, 0x30))));
    const parts = [certificate.subarray(0, 100), certificate.subarray(100, 200), certificate.subarray(200)].map((p) => record(CONTENT.HANDSHAKE, p));
    conn.clientBytes(ch);
    conn.serverBytes(sh);
    conn.serverBytes(parts[0]!);
    conn.serverBytes(parts[1]!.subarray(0, 20));
    const lost = s.frames.length;
    conn.serverBytes(parts[1]!.subarray(20));
    conn.serverBytes(parts[2]!);
    conn.serverBytes(record(CONTENT.HANDSHAKE, handshake(14, Buffer.alloc(0)))); // ServerHelloDone
    s.frames.splice(lost, 1);
    conn.clientBytes(record(CONTENT.CHANGE_CIPHER_SPEC, u8(1)));
    conn.serverBytes(record(CONTENT.CHANGE_CIPHER_SPEC, u8(1)));
    conn.close();
    const report = await analyzeFiles([s.file('tls12-cert-hole.pcap')]);
    // The ServerHelloDone is read (so the handshake is a full one, not resumed); the certificate is not made up.
    expect(report.connections[0]!.tls).toMatchObject({ version: 'TLS 1.2', resumed: false, certificate: null });
    expect(brief(report.findings).filter((f) => f[2].includes('does not parse'))).toEqual([]);
  });
});

describe('TLS 1.2 AES-GCM: a gap over a record header, counted with 1.2 overhead', () => {
  // RFC 5246 §6.3 key block for TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256: two 16-byte keys, then two
  // 4-byte salts (RFC 5288 §3); a record is the 8-byte explicit nonce, the ciphertext, the tag.
  const clientRandom = Buffer.alloc(32, 0xa1);
  const serverRandom = Buffer.alloc(32, 0xb2);
  const master = Buffer.alloc(48, 0x4d);
  const block = prf12(master, 'key expansion', Buffer.concat([serverRandom, clientRandom]), 40);
  const key = block.subarray(0, 16);
  const salt = block.subarray(32, 36);
  let seq = 0;
  const seal = (type: number, content: Buffer): Buffer => {
    const explicit = Buffer.alloc(8);
    explicit.writeUInt32BE(seq, 4);
    const aad = Buffer.concat([explicit, u8(type), Buffer.of(3, 3), Buffer.of(content.length >> 8, content.length & 0xff)]);
    seq++;
    const c = createCipheriv('aes-128-gcm', key, Buffer.concat([salt, explicit])) as CipherGCM;
    c.setAAD(aad);
    return record(type, Buffer.concat([explicit, c.update(content), c.final(), c.getAuthTag()]));
  };

  it('6 records of 1,000 bytes, 100 lost over the third header: 4,000 delivered, 2,000 reported', () => {
    const out = new Collect();
    const keys = new KeyLog();
    keys.add('test', `CLIENT_RANDOM ${clientRandom.toString('hex')} ${master.toString('hex')}\n`);
    const session = new TlsSession(out, keys);
    let frame = 1;
    const feed = (side: TlsSide, b: Buffer): void => session.data(side, b, 0, b.length, frame++, 0, 0);
    feed(0, record(CONTENT.HANDSHAKE, clientHello({ random: clientRandom, versions: [0x0303] }), 0x0301));
    feed(1, Buffer.concat([record(CONTENT.HANDSHAKE, serverHello({ random: serverRandom, cipher: 0xc02f, version: 0x0303 })), record(CONTENT.HANDSHAKE, handshake(14, Buffer.alloc(0)))]));
    feed(0, Buffer.concat([record(CONTENT.CHANGE_CIPHER_SPEC, u8(1)), seal(CONTENT.HANDSHAKE, handshake(20, Buffer.alloc(12, 0xf1)))]));
    const stream = Buffer.concat(Array.from({ length: 6 }, (_, i) => seal(CONTENT.APPLICATION_DATA, counting(1000, i * 1000))));
    // Records of 5 + 8 + 1,000 + 16 = 1,029 bytes: record 3's header is at 2,058.
    feed(0, stream.subarray(0, 2000));
    session.gap(0, 100, frame++);
    feed(0, stream.subarray(2100));
    session.end();
    expect(Buffer.concat(out.plain[0])).toEqual(Buffer.concat([counting(1000), counting(3000, 3000)]));
    expect(out.gaps[0]).toEqual([2000]);
  });
});

describe('TLS 1.3 experiments: losses around key changes', () => {
  it("the server's Finished lost over its record header: the search finds traffic secret 0", () => {
    const tls = new Tls13Session();
    const out = new Collect();
    const keys = new KeyLog();
    keys.add('test', tls.keylog);
    const session = new TlsSession(out, keys);
    let frame = 1;
    const feed = (side: TlsSide, b: Buffer): void => session.data(side, b, 0, b.length, frame++, 0, 0);
    feed(0, tls.clientFirst());
    const flight = tls.serverFlight();
    const finishedAt = flight.length - (5 + 4 + 32 + 1 + 16);
    const stream = Buffer.concat([flight, ...[0, 1, 2].map((i) => tls.server.seal(CONTENT.APPLICATION_DATA, counting(100, i * 100)))]);
    feed(1, stream.subarray(0, finishedAt + 2));
    session.gap(1, 60, frame++); // the Finished record from its third byte, and the first record's header
    feed(1, stream.subarray(finishedAt + 62));
    session.end();
    expect(Buffer.concat(out.plain[1])).toEqual(counting(200, 100));
    // The Finished (58 bytes) and record 1 (122) lost: the count names the records of the new stage and the change.
    expect(out.gaps[1]).toEqual([100 + 58 - 22]);
  });

  it('two gaps, the KeyUpdate in the first: every record after the second gap decrypts', () => {
    const m = started();
    m.feed(0, m.tls.client.seal(CONTENT.APPLICATION_DATA, counting(100)));
    const stream = Buffer.concat([m.tls.client.keyUpdate(), ...[1, 2, 3, 4, 5].map((i) => m.tls.client.seal(CONTENT.APPLICATION_DATA, counting(100, i * 100)))]);
    // KeyUpdate 27 bytes, then records of 122 at 27, 149, 271, 393, 515.
    m.gap(0, 30);
    m.feed(0, stream.subarray(30, 100));
    m.gap(0, 60); // over record 2's header at 149
    m.feed(0, stream.subarray(160));
    m.session.end();
    expect(Buffer.concat(m.out.plain[0])).toEqual(Buffer.concat([counting(100), counting(300, 300)]));
  });
});
