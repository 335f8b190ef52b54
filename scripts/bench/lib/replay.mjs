/**
 * The broker scenario: real client traffic, many clients at once, as a broker's interface sees it.
 *
 * The recorded fixtures (kcat/librdkafka, kafkajs, confluent-kafka-javascript, kafkajs over TLS:
 * see fixtures/README.md) are read once; each is a *session* template: every TCP packet of every
 * connection, with its time since the capture's first packet. A virtual client replays one
 * template from its own address (10.16.0.0/12), its brokers renumbered to 10.0.0.k:9092, keeping the
 * template's TCP sequence numbers, payloads and relative timing. Clients start at a steady rate
 * chosen so that about `concurrency` sessions are live at once, and their packets are merged by
 * time, so connections interleave packet by packet. `concurrency: 1` writes the same clients, the
 * same packets, one session after the other: the baseline the concurrent capture is compared with.
 *
 * Only this scenario reads files: the others are generated from nothing (scenarios.mjs).
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { PcapWriter, SYN, ACK, ipv4 } from './pcap-writer.mjs';
import { Rng } from './rng.mjs';

/** The fixtures replayed: real clients only (kip1313-mix is built by hand, so it is left out). */
const TEMPLATE = /^(kcat|kafkajs|ckjs)-.*\.(pcap|pcapng|pcap\.gz)$/;
const LINK_ETHERNET = 1;
const LINK_SLL = 113;
const LINK_SLL2 = 276;
const BROKER_PORT = 9092;

/**
 * Reads one capture into a session template: { name, packets: [{ us, conn, fromClient, seq, ack,
 * flags, payload }], connections, durationUs, bytes, keyLog }. Handles what the fixtures are: pcap
 * (µs or ns, little-endian) and pcapng (EPB, IDB's if_tsresol, DSB key logs), gzip or not; Ethernet
 * and Linux cooked v1/v2; IPv4 TCP. A connection's client is the side that sent the SYN.
 */
export function readTemplate(path) {
  let buf = readFileSync(path);
  if (buf[0] === 0x1f && buf[1] === 0x8b) buf = gunzipSync(buf);
  const frames = buf.readUInt32LE(0) === 0x0a0d0d0a ? pcapngFrames(buf) : pcapFrames(buf);
  const conns = new Map();
  const packets = [];
  let keyLog = '';
  let first = null;
  for (const f of frames) {
    if (f.keyLog !== undefined) {
      keyLog += f.keyLog;
      continue;
    }
    const ip = ipOffset(f.data, f.link);
    if (ip < 0 || f.data[ip] >> 4 !== 4 || f.data[ip + 9] !== 6) continue;
    const d = f.data;
    const ihl = (d[ip] & 15) * 4;
    const total = d.readUInt16BE(ip + 2);
    const t = ip + ihl;
    const src = d.readUInt32BE(ip + 12);
    const dst = d.readUInt32BE(ip + 16);
    const sport = d.readUInt16BE(t);
    const dport = d.readUInt16BE(t + 2);
    const flags = d[t + 13];
    const payload = d.subarray(t + (d[t + 12] >> 4) * 4, Math.min(d.length, ip + total));
    const a = `${src}:${sport}`;
    const b = `${dst}:${dport}`;
    const key = a < b ? `${a}-${b}` : `${b}-${a}`;
    let c = conns.get(key);
    if (c === undefined) {
      // The SYN's sender is the client; without one, the side on the higher (ephemeral) port.
      const clientIsSrc = flags & SYN ? !(flags & ACK) : sport > dport;
      c = {
        index: conns.size,
        client: clientIsSrc ? { ip: src, port: sport } : { ip: dst, port: dport },
        broker: clientIsSrc ? { ip: dst, port: dport } : { ip: src, port: sport },
      };
      conns.set(key, c);
    }
    first ??= f.us;
    packets.push({
      us: f.us - first,
      conn: c.index,
      fromClient: src === c.client.ip && sport === c.client.port,
      seq: d.readUInt32BE(t + 4),
      ack: d.readUInt32BE(t + 8),
      flags,
      payload: Buffer.from(payload),
    });
  }
  const connections = [...conns.values()];
  return {
    name: path.split('/').pop(),
    packets,
    connections,
    durationUs: packets.length === 0 ? 0 : packets[packets.length - 1].us,
    bytes: packets.reduce((n, p) => n + p.payload.length + 86, 0),
    keyLog,
  };
}

function pcapFrames(buf) {
  const magic = buf.readUInt32LE(0);
  const nano = magic === 0xa1b23c4d;
  if (!nano && magic !== 0xa1b2c3d4) throw new Error('not a little-endian pcap');
  const link = buf.readUInt32LE(20);
  const out = [];
  for (let p = 24; p + 16 <= buf.length; ) {
    const sec = buf.readUInt32LE(p);
    const frac = buf.readUInt32LE(p + 4);
    const incl = buf.readUInt32LE(p + 8);
    out.push({ us: sec * 1e6 + (nano ? Math.floor(frac / 1000) : frac), link, data: buf.subarray(p + 16, p + 16 + incl) });
    p += 16 + incl;
  }
  return out;
}

function pcapngFrames(buf) {
  const out = [];
  const links = [];
  for (let p = 0; p + 12 <= buf.length; ) {
    const type = buf.readUInt32LE(p);
    const len = buf.readUInt32LE(p + 4);
    if (type === 1) {
      // Interface Description Block: link type, then options; if_tsresol (9) is 10^-n seconds.
      let res = 6;
      for (let o = p + 16; o + 4 <= p + len - 4; ) {
        const code = buf.readUInt16LE(o);
        const olen = buf.readUInt16LE(o + 2);
        if (code === 0) break;
        if (code === 9) res = buf[o + 4];
        o += 4 + ((olen + 3) & ~3);
      }
      links.push({ link: buf.readUInt16LE(p + 8), res });
    } else if (type === 6) {
      const ifc = links[buf.readUInt32LE(p + 8)];
      const ts = buf.readUInt32LE(p + 12) * 2 ** 32 + buf.readUInt32LE(p + 16);
      const incl = buf.readUInt32LE(p + 20);
      out.push({ us: Math.floor(ts / 10 ** (ifc.res - 6)), link: ifc.link, data: buf.subarray(p + 28, p + 28 + incl) });
    } else if (type === 10 && buf.readUInt32LE(p + 8) === 0x544c534b) {
      // Decryption Secrets Block with a TLS key log.
      out.push({ keyLog: buf.toString('latin1', p + 16, p + 16 + buf.readUInt32LE(p + 12)) });
    }
    p += len;
  }
  return out;
}

function ipOffset(d, link) {
  if (link === LINK_ETHERNET) return d.readUInt16BE(12) === 0x0800 ? 14 : -1;
  if (link === LINK_SLL) return d.readUInt16BE(14) === 0x0800 ? 16 : -1;
  if (link === LINK_SLL2) return d.readUInt16BE(0) === 0x0800 ? 20 : -1;
  return -1;
}

/** Every template under `dir`, in name order, with the key log they need together. */
export function readTemplates(dir) {
  const templates = readdirSync(dir).filter((n) => TEMPLATE.test(n)).sort().map((n) => readTemplate(join(dir, n)));
  let keyLog = templates.map((t) => t.keyLog).join('');
  for (const n of readdirSync(dir).sort()) if (n.endsWith('.keys') && templates.some((t) => t.name.startsWith(n.slice(0, -5)))) keyLog += readFileSync(join(dir, n), 'latin1');
  return { templates, keyLog };
}

/** A small binary heap of sessions ordered by the time of their next packet. */
class SessionHeap {
  constructor() {
    this.a = [];
  }
  get size() {
    return this.a.length;
  }
  push(s) {
    const a = this.a;
    a.push(s);
    for (let i = a.length - 1; i > 0; ) {
      const p = (i - 1) >> 1;
      if (a[p].nextUs <= a[i].nextUs) break;
      [a[p], a[i]] = [a[i], a[p]];
      i = p;
    }
  }
  pop() {
    const a = this.a;
    const top = a[0];
    const last = a.pop();
    if (a.length > 0) {
      a[0] = last;
      for (let i = 0; ; ) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && a[l].nextUs < a[m].nextUs) m = l;
        if (r < a.length && a[r].nextUs < a[m].nextUs) m = r;
        if (m === i) break;
        [a[m], a[i]] = [a[i], a[m]];
        i = m;
      }
    }
    return top;
  }
}

/**
 * Writes about `bytes` of replayed sessions to `path`; `concurrency` sessions live at once (1: one
 * after the other). Returns the manifest; `keyLogPath`, when given, receives the key log the TLS
 * sessions need. The same seed and size give the same clients, in the same order, whatever the
 * concurrency.
 */
export function generateBroker(path, bytes, seed, { fixtures, concurrency = 2000, keyLogPath = null }) {
  const { templates, keyLog } = readTemplates(fixtures);
  if (templates.length === 0) throw new Error(`no fixture captures to replay in ${fixtures}`);
  if (keyLogPath !== null) writeFileSync(keyLogPath, keyLog);
  const rng = new Rng(seed);
  // The clients first (a template each), until the bytes are reached: the same list for every concurrency.
  const clients = [];
  for (let total = 24; total < bytes; ) {
    const t = templates[rng.int(0, templates.length - 1)];
    clients.push(t);
    total += t.bytes;
  }
  const meanUs = templates.reduce((n, t) => n + t.durationUs, 0) / templates.length;
  // Sessions start every meanUs / concurrency on average, so about `concurrency` are live at once.
  const gapUs = concurrency <= 1 ? 0 : meanUs / concurrency;
  const w = new PcapWriter(path);
  const t0 = w.clockUs;
  const heap = new SessionHeap();
  let connections = 0;
  let startUs = t0;
  let next = 0;
  const startSession = (i, at) => {
    const t = clients[i];
    const host = (ipv4('10.16.0.0') + i + 1) >>> 0;
    const brokers = new Map();
    const ends = t.connections.map((c) => {
      const k = `${c.broker.ip}:${c.broker.port}`;
      if (!brokers.has(k)) brokers.set(k, (ipv4('10.0.0.1') + brokers.size) >>> 0);
      const client = { ip: host, port: c.client.port, mac: host, ipId: (i * 7919 + c.index) & 0xffff, tsval: 0 };
      const broker = { ip: brokers.get(k), port: BROKER_PORT, mac: brokers.get(k), ipId: (i * 104729 + c.index) & 0xffff, tsval: 0 };
      return { client, broker };
    });
    connections += t.connections.length;
    heap.push({ t, at, i: 0, ends, nextUs: at + t.packets[0].us });
  };
  const dueNext = () => next < clients.length && (concurrency > 1 ? startUs <= (heap.size > 0 ? heap.a[0].nextUs : Infinity) : heap.size === 0);
  for (;;) {
    while (dueNext()) {
      startSession(next++, startUs);
      startUs += concurrency > 1 ? Math.round(gapUs * (0.5 + rng.next())) : 0;
    }
    if (heap.size === 0) break;
    const s = heap.pop();
    const p = s.t.packets[s.i];
    const e = s.ends[p.conn];
    w.clockUs = Math.max(w.clockUs, s.nextUs);
    const [src, dst] = p.fromClient ? [e.client, e.broker] : [e.broker, e.client];
    w.segment(src, dst, p.seq, p.ack, p.flags, p.payload, 0, p.payload.length);
    if (++s.i < s.t.packets.length) {
      s.nextUs = s.at + s.t.packets[s.i].us;
      heap.push(s);
    } else if (concurrency <= 1) {
      // One at a time: the next session starts a millisecond after this one's last packet.
      startUs = w.clockUs + 1000;
    }
  }
  w.close();
  return {
    scenario: 'broker',
    seed,
    concurrency,
    targetBytes: bytes,
    bytes: w.bytes,
    packets: w.packets,
    clients: clients.length,
    connections,
    templates: templates.map((t) => t.name),
    requests: null,
    responses: null,
    durationSec: +((w.clockUs - t0) / 1e6).toFixed(1),
  };
}
