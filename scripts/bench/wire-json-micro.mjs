#!/usr/bin/env node
/**
 * Micro-benchmark of a body's JSON for `kcid requests --bodies`: the old way (the interpreter's full
 * decode into a Struct, toKafkaJson's string through bodyJson, that string UTF-8 encoded into a
 * ByteText) against writeBodyJson (src/kafka/schema/wire-json.ts: the JSON bytes written straight from
 * the wire), over real bodies cut out of bench captures. Not a test: figures depend on the machine and
 * its load. Both sides run interleaved (A, B, A, B, ...) in rounds; the median of each is printed.
 *
 *   node --expose-gc scripts/bench/wire-json-micro.mjs [capture.pcap ...]   (default /tmp/bench/chatty20.pcap)
 *
 * The capture is read by a small classic-pcap reader here (Ethernet, IPv4 or IPv6, TCP, in order: what
 * scripts/bench/generate.mjs writes), each flow's payload split into size-prefixed frames, the headers
 * read by the schemas, responses paired with their requests by correlation ID.
 */
import { build } from 'esbuild';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const entry = `
export * as bodies from './src/kafka/bodies.ts';
export * as secrets from './src/kafka/secrets.ts';
export * as protocol from './src/kafka/protocol.ts';
export * as registry from './src/kafka/schema/registry.ts';
export { ByteText } from './src/base/byte-text.ts';
`;
const out = await build({ stdin: { contents: entry, resolveDir: root, loader: 'ts' }, bundle: true, write: false, format: 'esm', platform: 'node', logLevel: 'warning' });
const { bodies, secrets, protocol, registry, ByteText } = await import(`data:text/javascript;base64,${Buffer.from(out.outputFiles[0].text).toString('base64')}`);

const p = protocol.protocol();
const schemas = p.schemas;
const MAX_BODIES = 200000;

/** Each TCP flow's payload, in capture order (the bench captures are in order and whole). */
function flows(path) {
  const f = readFileSync(path);
  if (f.readUInt32LE(0) !== 0xa1b2c3d4 && f.readUInt32LE(0) !== 0xa1b23c4d) throw new Error(`${path}: not a little-endian classic pcap`);
  const byFlow = new Map();
  let at = 24;
  while (at + 16 <= f.length) {
    const incl = f.readUInt32LE(at + 8);
    const pkt = at + 16;
    at = pkt + incl;
    let ip = pkt + 14;
    let type = f.readUInt16BE(pkt + 12);
    if (type === 0x8100) {
      type = f.readUInt16BE(pkt + 16);
      ip += 4;
    }
    let tcp;
    let src;
    let dst;
    let end;
    if (type === 0x0800) {
      if (f[ip + 9] !== 6) continue;
      tcp = ip + (f[ip] & 15) * 4;
      src = f.readUInt32BE(ip + 12);
      dst = f.readUInt32BE(ip + 16);
      end = ip + f.readUInt16BE(ip + 2);
    } else if (type === 0x86dd) {
      if (f[ip + 6] !== 6) continue;
      tcp = ip + 40;
      src = f.toString('hex', ip + 8, ip + 24);
      dst = f.toString('hex', ip + 24, ip + 40);
      end = tcp + f.readUInt16BE(ip + 4);
    } else continue;
    const sport = f.readUInt16BE(tcp);
    const dport = f.readUInt16BE(tcp + 2);
    const data = tcp + (f[tcp + 12] >> 4) * 4;
    if (data >= end) continue;
    const key = `${src}:${sport}>${dst}:${dport}`;
    let flow = byFlow.get(key);
    if (!flow) byFlow.set(key, (flow = { toBroker: dport < sport, peer: `${dst}:${dport}>${src}:${sport}`, chunks: [] }));
    flow.chunks.push(f.subarray(data, end));
  }
  return byFlow;
}

function frames(chunks) {
  const b = Buffer.concat(chunks);
  const out = [];
  for (let at = 0; at + 4 <= b.length; ) {
    const n = b.readInt32BE(at);
    if (n < 0 || at + 4 + n > b.length) break;
    out.push(b.subarray(at + 4, at + 4 + n));
    at += 4 + n;
  }
  return out;
}

function skipTags(b, at) {
  const uv = () => {
    let v = 0;
    for (let s = 0; ; s += 7) {
      const c = b[at++];
      v |= (c & 0x7f) << s;
      if ((c & 0x80) === 0) return v >>> 0;
    }
  };
  const n = uv();
  for (let i = 0; i < n; i++) {
    uv();
    const size = uv();
    at += size;
  }
  return at;
}

/** [kind, key, version, bytes] of every body of the captures, requests and responses. */
function collect(paths) {
  const list = [];
  for (const path of paths) {
    const byFlow = flows(path);
    for (const flow of byFlow.values()) {
      if (!flow.toBroker || list.length >= MAX_BODIES) continue;
      const pending = new Map();
      for (const fr of frames(flow.chunks)) {
        const key = fr.readInt16BE(0);
        const version = fr.readInt16BE(2);
        const hv = p.requestHeaderVersion(key, version);
        if (hv === null) continue;
        let at = 8;
        const idLen = fr.readInt16BE(at);
        at += 2 + Math.max(idLen, 0);
        if (hv >= 2) at = skipTags(fr, at);
        pending.set(fr.readInt32BE(4), [key, version]);
        list.push(['request', key, version, fr.subarray(at)]);
      }
      const back = byFlow.get(flow.peer);
      if (!back) continue;
      for (const fr of frames(back.chunks)) {
        const req = pending.get(fr.readInt32BE(0));
        if (!req) continue;
        const hv = p.responseHeaderVersion(req[0], req[1]);
        const at = hv >= 1 ? skipTags(fr, 4) : 4;
        list.push(['response', req[0], req[1], fr.subarray(at)]);
      }
    }
  }
  return list;
}

const paths = process.argv.slice(2);
const list = collect(paths.length ? paths : ['/tmp/bench/chatty20.pcap']);
const groups = new Map();
for (const [kind, key, version, b] of list) {
  const g = `${p.label(key, version)} ${kind}`;
  const e = groups.get(g) ?? { n: 0, bytes: 0 };
  e.n++;
  e.bytes += b.length;
  groups.set(g, e);
}
console.log(`${list.length} bodies: ${[...groups].map(([g, e]) => `${g} ${e.n} (${Math.round(e.bytes / e.n)} B)`).join(', ')}`);

const text = new ByteText(1 << 20);
function old(list) {
  text.pos = 0;
  for (let i = 0; i < list.length; i++) {
    const [kind, key, version, b] = list[i];
    const d = bodies.decodeBody(kind, key, version, true, b, 0, b.length, b.length, p);
    text.utf8(secrets.bodyJson(kind, key, version, d.body, p));
    if (text.pos > 1 << 19) text.pos = 0;
  }
}
let declined = 0;
function wire(list) {
  text.pos = 0;
  declined = 0;
  for (let i = 0; i < list.length; i++) {
    const [kind, key, version, b] = list[i];
    if (!secrets.writeBodyJson(kind, key, version, b, 0, b.length, text, p)) declined++;
    if (text.pos > 1 << 19) text.pos = 0;
  }
}

// The same bytes, first.
let outBytes = 0;
for (const [kind, key, version, b] of list) {
  const d = bodies.decodeBody(kind, key, version, true, b, 0, b.length, b.length, p);
  const want = Buffer.from(secrets.bodyJson(kind, key, version, d.body, p), 'utf8');
  const t = new ByteText(64);
  if (!secrets.writeBodyJson(kind, key, version, b, 0, b.length, t, p) || !t.buf.subarray(0, t.pos).equals(want)) {
    console.error(`not the same bytes: ${p.label(key, version)} ${kind}`);
    process.exit(1);
  }
  outBytes += want.length;
}
console.log(`${(outBytes / 1e6).toFixed(1)} MB of JSON, the same bytes both ways`);

// A collection before each side, so neither pays for the other's garbage (each pays for its own).
const gc = globalThis.gc ?? (() => {});
if (globalThis.gc === undefined) console.log('(run with node --expose-gc for a collection between the sides)');
const med = (xs) => xs.sort((x, y) => x - y)[xs.length >> 1];
function compare(name, bodies, rounds) {
  const ra = [];
  const rb = [];
  for (let round = 0; round < rounds; round++) {
    gc();
    let t = process.hrtime.bigint();
    old(bodies);
    ra.push(Number(process.hrtime.bigint() - t) / bodies.length);
    gc();
    t = process.hrtime.bigint();
    wire(bodies);
    rb.push(Number(process.hrtime.bigint() - t) / bodies.length);
  }
  console.log(`${name.padEnd(28)} decode + bodyJson + UTF-8 ${med(ra).toFixed(0).padStart(6)} ns   writeBodyJson ${med(rb).toFixed(0).padStart(5)} ns (${declined} declined)   ${(med(ra) / med(rb)).toFixed(2)}x`);
}
/** The bodies copied back to back into one buffer: as in kcid, where a body is read just after it is framed, not spread over the capture's bytes. */
function packed(bodies) {
  const all = new Uint8Array(bodies.reduce((n, x) => n + x[3].length, 0));
  let at = 0;
  return bodies.map(([kind, key, version, b]) => {
    all.set(b, at);
    at += b.length;
    return [kind, key, version, all.subarray(at - b.length, at)];
  });
}
compare('every body', packed(list), 9);
for (const g of groups.keys()) compare(g, packed(list.filter(([kind, key, version]) => `${p.label(key, version)} ${kind}` === g)), 9);
