#!/usr/bin/env node
/**
 * TLS benchmark: `node scripts/bench/tls.mjs [--size 200MB] [--rounds 5] [--no-tshark]`.
 * Writes the produce-heavy scenario twice, in plaintext and over TLS 1.3 (the same Kafka traffic;
 * scripts/bench/lib/tls.mjs), and times, interleaved round by round, kcid on the plaintext, kcid
 * on the TLS capture with its key log, and (once per round, it is slow) tshark decrypting the TLS
 * capture with the same key log and dissecting Kafka in it. Prints MB/s and the ratios.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generate } from './lib/scenarios.mjs';
import { interleaved, measure, which } from './lib/measure.mjs';
import { parseBytes } from './lib/units.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const KCID = join(ROOT, 'bin/kcid');
const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(name);
  return i < 0 ? fallback : args[i + 1];
};
const size = parseBytes(opt('--size', '200MB'));
const rounds = Number(opt('--rounds', '5'));
const tshark = !args.includes('--no-tshark') && which('tshark');

const dir = mkdtempSync(join(tmpdir(), 'kcid-bench-tls-'));
try {
  const plain = join(dir, 'produce.pcap');
  const tls = join(dir, 'produce-tls.pcap');
  const keys = join(dir, 'produce-tls.keys');
  const m1 = generate('produce', plain, size, 1);
  const m2 = generate('produce', tls, size, 1, { tlsKeylog: keys });
  const mb = (file) => statSync(file).size / 1e6;
  const kcid = (file, extra = []) => () => measure(process.execPath, [KCID, 'analyze', file, '--format', 'json', '-q', '--fail-on', 'none', ...extra]);
  const runs = { plain: kcid(plain), tls: kcid(tls, ['--tls-keylog', keys]) };
  if (tshark) {
    runs.tshark = () =>
      measure('tshark', ['-r', tls, '-n', '-o', `tls.keylog_file:${keys}`, '-d', 'tcp.port==9092,tls', '-d', 'tls.port==9092,kafka', '-Y', 'kafka', '-T', 'fields', '-e', 'kafka.api_key']);
  }
  const r = await interleaved(rounds, runs);
  const rate = (file, run) => +(mb(file) / run.seconds).toFixed(1);
  const out = {
    sizeMB: { plain: +mb(plain).toFixed(1), tls: +mb(tls).toFixed(1) },
    requests: { plain: m1.requests, tls: m2.requests },
    seconds: Object.fromEntries(Object.entries(r).map(([k, v]) => [k, { median: +v.seconds.toFixed(3), all: v.all, rssMB: v.rssKB === null ? null : Math.round(v.rssKB / 1024) }])),
    MBps: { plain: rate(plain, r.plain), tls: rate(tls, r.tls), ...(r.tshark ? { tshark: rate(tls, r.tshark) } : {}) },
  };
  out.ratio = { tlsToPlain: +(out.MBps.tls / out.MBps.plain).toFixed(2), ...(r.tshark ? { tlsToTshark: +(out.MBps.tls / out.MBps.tshark).toFixed(1) } : {}) };
  process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
