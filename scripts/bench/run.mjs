#!/usr/bin/env node
/**
 * `npm run bench`: kcid against the read limit (`cat FILE > /dev/null`) and tshark on generated
 * captures, with a scaling run that shows how time and peak memory grow with the input; a broker's
 * capture (the recorded fixtures replayed as 2,000 clients at once, lib/replay.mjs) against the same
 * packets one client at a time and against --jobs 2; and kcid's start-up against `node -e 0`.
 *
 *   node scripts/bench/run.mjs [--quick] [--size 1GiB] [--small-size 200MB] [--only produce,chatty]
 *                              [--json results.json] [--dir DIR] [--seed 1] [--repeat 3]
 *                              [--no-tshark] [--no-scaling] [--no-multi] [--no-export] [--no-bodies] [--no-startup] [--tshark-budget 60]
 *                              [--kcid bin/kcid]
 *
 * Inputs are generated at run time into a temporary folder (removed at the end unless --dir is
 * given). Every program runs as a child of this one, one at a time, on files already in the page
 * cache; peak RSS is the child's own (GNU time's %M). Times are medians of --repeat rounds, and
 * the runs a ratio compares are interleaved: each round runs `cat`, kcid on the whole input and
 * kcid on its first quarter and half, and --jobs 1 next to --jobs 2, so a host that slows down
 * for a while slows a round of both sides of a ratio rather than every run of one side.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, platform, release, tmpdir, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generate, SCENARIOS as GENERATED } from './lib/scenarios.mjs';
import { generateBroker } from './lib/replay.mjs';
import { hasGnuTime, interleaved, measure, which } from './lib/measure.mjs';
import { writePcapPrefix } from './lib/prefix.mjs';
import { formatBytes, parseBytes } from './lib/units.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
let KCID = join(ROOT, 'bin/kcid');
const KCID_RSS_WRAPPER = join(ROOT, 'scripts/bench/lib/kcid-rss.mjs');
const GiB = 1024 ** 3;

/** What each input is called in the table, and whether --size (big) or --small-size sets it. */
const INPUTS = {
  produce: { label: 'produce-heavy', big: true },
  fetch: { label: 'fetch-heavy', big: true },
  chatty: { label: 'chatty', big: false },
  telemetry: { label: 'KIP-1313 telemetry mix', big: false },
  broker: { label: 'broker (real clients, 2,000 at once)', big: false },
};
/** Every input: the generated ones, then the broker's replay of the recorded fixtures (lib/replay.mjs). */
const SCENARIOS = [...GENERATED, 'broker'];
/** Sessions live at once in the broker input. */
const BROKER_CONCURRENCY = 2000;

/** The issue's targets (issue 3), checked at the end. */
const TARGETS = {
  minCatRatio: 0.5, // produce/fetch: kcid MB/s >= 50% of cat's
  minTsharkRatio: 50, // produce/fetch: kcid MB/s >= 50x tshark's
  minChattyPacketsPerSec: 1e6,
  maxRssMB: 150,
  maxProduceRssMB: 100, // produce-heavy: peak RSS under 100 MB
  minBrokerTsharkRatio: 50, // broker: kcid packets/s >= 50x tshark's
  maxBrokerOverSerial: 1.3, // broker: at most 1.3x the time of the same packets one client at a time
  maxBrokerJobsRatio: 0.62, // broker: --jobs 2 on the one capture <= 62% of --jobs 1
  maxStartupRatio: 1.2, // an empty capture: at most 1.2x `node -e 0`
  maxFullOverHalf: 2.2,
  maxJobsRatio: 0.6,
  minExportSpeed: 0.5, // kcid export: at least half the speed of kcid requests --format ndjson (issue 18)
  maxExportExtraRssMB: 50, // ...and peak RSS within 50 MB of it
};

function parseArgs(argv) {
  const o = {
    quick: false, size: null, smallSize: null, only: SCENARIOS, json: null, dir: null, seed: 1, repeat: 3,
    tshark: true, scaling: true, tsharkBudget: 60, multi: true, export: true, bodies: true, startup: true,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const val = () => {
      if (i + 1 >= argv.length) usage(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--quick') o.quick = true;
    else if (a === '--size') o.size = parseBytes(val());
    else if (a === '--small-size') o.smallSize = parseBytes(val());
    else if (a === '--only') o.only = val().split(',').map((s) => s.trim());
    else if (a === '--json') o.json = resolve(val());
    else if (a === '--dir') o.dir = resolve(val());
    else if (a === '--seed') o.seed = Number(val());
    else if (a === '--repeat') o.repeat = Math.max(1, Number(val()));
    else if (a === '--tshark-budget') o.tsharkBudget = Number(val());
    else if (a === '--no-tshark') o.tshark = false;
    else if (a === '--no-bodies') o.bodies = false;
    else if (a === '--no-scaling') o.scaling = false;
    else if (a === '--no-multi') o.multi = false;
    else if (a === '--no-export') o.export = false;
    else if (a === '--no-startup') o.startup = false;
    else if (a === '--kcid') KCID = resolve(val());
    else if (a === '--help' || a === '-h') usage(null);
    else usage(`unknown option ${a}`);
  }
  for (const s of o.only) if (!SCENARIOS.includes(s)) usage(`unknown input '${s}' (expected ${SCENARIOS.join(', ')})`);
  const quick = 50e6;
  const big = o.size ?? (o.quick ? quick : GiB);
  // The small inputs keep the default proportion (200 MB to 1 GiB) unless given.
  const small = o.smallSize ?? (o.quick ? quick : o.size === null ? 200e6 : Math.round((o.size * 200e6) / GiB));
  o.sizes = Object.fromEntries(SCENARIOS.map((s) => [s, INPUTS[s].big ? big : small]));
  return o;
}

function usage(error) {
  const source = readFileSync(fileURLToPath(import.meta.url), 'utf8');
  const header = source.slice(source.indexOf('/**') + 3, source.indexOf(' */'));
  const text = header.split('\n').map((l) => l.replace(/^ \* ?/, '')).join('\n').trim();
  (error ? process.stderr : process.stdout).write(`${error ? `bench: ${error}\n\n` : ''}${text}\n`);
  process.exit(error ? 2 : 0);
}

const log = (s) => process.stderr.write(`${s}\n`);

function machine(tshark) {
  const cpu = cpus();
  const lscpu = spawnSync('lscpu', [], { encoding: 'utf8' });
  const model = /Model name:\s*(.+)/.exec(lscpu.stdout ?? '')?.[1]?.trim() ?? cpu[0]?.model ?? 'unknown';
  return {
    cpus: cpu.length,
    model,
    memoryGiB: +(totalmem() / GiB).toFixed(1),
    os: `${platform()} ${release()}`,
    node: process.version,
    tshark: tshark === null ? null : (spawnSync(tshark, ['--version'], { encoding: 'utf8' }).stdout.split('\n')[0] ?? '').trim(),
    gnuTime: hasGnuTime,
    loadAverageAtStart: +loadavg()[0].toFixed(2),
  };
}

// ---- the three programs -----------------------------------------------------------------------

/** `cat FILE > /dev/null`: the read limit, and what puts a file back in the page cache. */
function catRun(file) {
  return measure('cat', [file]);
}

/** `kcid analyze FILE --format json`, its report written to `out`. */
async function kcidRun(file, out = '/dev/null', extra = []) {
  const m = await measure(process.execPath, [KCID, 'analyze', file, '--format', 'json', '-q', ...extra], { stdoutPath: out, nodeWrapper: KCID_RSS_WRAPPER });
  // Exit 1 means findings at --fail-on (the telemetry mix has them on purpose).
  if (m.code !== 0 && m.code !== 1) throw new Error(`kcid failed on ${file} (exit ${m.code}): ${m.stderr}`);
  return m;
}

/** `kcid telemetry FILE --format json`: the KIP-714 conversations, every push's metrics decoded (issue 15). */
async function kcidTelemetryRun(file) {
  const m = await measure(process.execPath, [KCID, 'telemetry', file, '--format', 'json', '-q'], { stdoutPath: '/dev/null', nodeWrapper: KCID_RSS_WRAPPER });
  if (m.code !== 0) throw new Error(`kcid telemetry failed on ${file} (exit ${m.code}): ${m.stderr}`);
  return m;
}

const TSHARK_ARGS = (file) => ['-r', file, '-d', 'tcp.port==9092,kafka', '-T', 'fields', '-e', 'kafka.api_key', '-e', 'kafka.correlation_id', '-e', 'kafka.client_id'];
/** tshark's full decode of every Kafka body, as JSON: what `kcid requests --bodies` is compared with. */
const TSHARK_BODIES_ARGS = (file) => ['-r', file, '-d', 'tcp.port==9092,kafka', '-T', 'json', '-j', 'kafka'];

/** `kcid requests FILE --bodies --format ndjson`: every body decoded, written as Kafka's JSON converters do. */
async function kcidBodiesRun(file) {
  const m = await measure(process.execPath, [KCID, 'requests', file, '--bodies', '--format', 'ndjson', '-q'], { nodeWrapper: KCID_RSS_WRAPPER });
  if (m.code !== 0) throw new Error(`kcid requests --bodies failed on ${file} (exit ${m.code}): ${m.stderr}`);
  return m;
}

/**
 * tshark on the whole file when that takes under `budget` seconds, else on a prefix sized to take
 * about that long (estimated from a small first prefix); its time is then scaled to the whole file.
 */
async function runTshark(tshark, file, bytes, budget, workDir, argsOf = TSHARK_ARGS) {
  const probeBytes = Math.min(bytes, 16 * 1024 * 1024);
  let run = { file, bytes };
  if (probeBytes < bytes) {
    const probe = join(workDir, 'tshark-probe.pcap');
    const p = writePcapPrefix(file, probe, probeBytes);
    const t = await measure(tshark, argsOf(probe));
    rmSync(probe, { force: true });
    const rate = p.bytes / t.seconds;
    if (bytes / rate > budget) {
      const prefix = join(workDir, 'tshark-prefix.pcap');
      const cut = writePcapPrefix(file, prefix, Math.max(probeBytes, Math.floor(rate * budget * 0.8)));
      run = { file: prefix, bytes: cut.bytes, packets: cut.packets };
    }
  }
  const m = await measure(tshark, argsOf(run.file));
  if (m.code !== 0) log(`  tshark exited with ${m.code}: ${m.stderr.split('\n').filter((l) => !/Running as user/.test(l)).join(' ').slice(0, 200)}`);
  if (run.file !== file) rmSync(run.file, { force: true });
  const fraction = run.bytes / bytes;
  return { ...m, prefixBytes: run.file === file ? null : run.bytes, measuredSeconds: m.seconds, seconds: m.seconds / fraction };
}

// ---- one input ------------------------------------------------------------------------------------

function rates(seconds, bytes, manifest) {
  return {
    seconds: +seconds.toFixed(4),
    mbPerSec: +(bytes / 1e6 / seconds).toFixed(1),
    packetsPerSec: Math.round(manifest.packets / seconds),
    requestsPerSec: Math.round(manifest.requests / seconds),
  };
}

/** The scaling run's inputs: the first 1/4 and 1/2 of `file`, cut before anything is timed. */
function scalingParts(name, file, bytes, dir) {
  return [0.25, 0.5].map((fraction) => {
    const f = join(dir, `${name}-${fraction}.pcap`);
    return { fraction, file: f, bytes: writePcapPrefix(file, f, Math.floor(bytes * fraction)).bytes };
  });
}

async function benchInput(name, o, dir, tshark) {
  if (name === 'broker') return benchBroker(o, dir, tshark);
  const file = join(dir, `${name}.pcap`);
  log(`\n[${INPUTS[name].label}] generating ${formatBytes(o.sizes[name])} ...`);
  const t0 = performance.now();
  const manifest = generate(name, file, o.sizes[name], o.seed);
  const bytes = statSync(file).size;
  log(`  ${formatBytes(bytes)}, ${manifest.packets} packets, ${manifest.connections} connections, ${manifest.requests} requests (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
  await catRun(file); // page cache warm-up
  const parts = o.scaling ? scalingParts(name, file, bytes, dir) : [];
  const out = join(dir, 'kcid-out.json');
  const runs = { cat: () => catRun(file), kcid: () => kcidRun(file, out) };
  // The telemetry mix is also read by `kcid telemetry`, next to `analyze` in the same rounds.
  if (name === 'telemetry') runs['kcid telemetry'] = () => kcidTelemetryRun(file);
  for (const p of parts) {
    runs[`part ${p.fraction}`] = async () => {
      await catRun(p.file);
      return kcidRun(p.file);
    };
  }
  log(`  cat, kcid${o.scaling ? ', kcid on 1/4 and 1/2 of the file' : ''}: ${o.repeat} interleaved rounds ...`);
  const m = await interleaved(o.repeat, runs);
  const { cat } = m;
  const kcid = { ...m.kcid, report: JSON.parse(readFileSync(out, 'utf8')) };
  rmSync(out, { force: true });
  const check = checkCounts(kcid.report, manifest);
  if (check.length > 0) log(`  WARNING: kcid's counts differ from what was generated: ${check.join('; ')}`);
  let ts = null;
  if (tshark !== null) {
    log('  tshark ...');
    ts = await runTshark(tshark, file, bytes, o.tsharkBudget, dir);
  }
  // kcid requests --bodies against tshark -T json -j kafka: both decode every body.
  let bodies = null;
  if (o.bodies) {
    log(`  kcid requests --bodies: ${o.repeat} rounds ...`);
    const b = await interleaved(o.repeat, { bodies: () => kcidBodiesRun(file) });
    bodies = { kcid: { ...rates(b.bodies.seconds, bytes, manifest), rssKB: b.bodies.rssKB, runs: b.bodies.all }, tshark: null };
    if (tshark !== null) {
      log('  tshark -T json -j kafka ...');
      const t = await runTshark(tshark, file, bytes, o.tsharkBudget, dir, TSHARK_BODIES_ARGS);
      bodies.tshark = { ...rates(t.seconds, bytes, manifest), rssKB: t.rssKB, prefixBytes: t.prefixBytes, measuredSeconds: +t.measuredSeconds.toFixed(3) };
    }
  }
  const result = {
    name,
    label: INPUTS[name].label,
    bytes,
    manifest,
    countsMatch: check.length === 0,
    kcidSummary: kcid.report.summary,
    cat: { ...rates(cat.seconds, bytes, manifest), rssKB: cat.rssKB, runs: cat.all },
    kcid: { ...rates(kcid.seconds, bytes, manifest), rssKB: kcid.rssKB, runs: kcid.all },
    tshark: ts === null ? null : { ...rates(ts.seconds, bytes, manifest), rssKB: ts.rssKB, prefixBytes: ts.prefixBytes, measuredSeconds: +ts.measuredSeconds.toFixed(3) },
    scaling: null,
    ...(m['kcid telemetry'] === undefined
      ? {}
      : { kcidTelemetry: { ...rates(m['kcid telemetry'].seconds, bytes, manifest), rssKB: m['kcid telemetry'].rssKB, runs: m['kcid telemetry'].all } }),
    bodies,
  };
  if (result.kcidTelemetry !== undefined) {
    log(`  kcid telemetry: ${result.kcidTelemetry.seconds} s, ${result.kcidTelemetry.mbPerSec} MB/s, peak RSS ${Math.round(result.kcidTelemetry.rssKB / 1024)} MB (analyze: ${result.kcid.seconds} s, ${result.kcid.mbPerSec} MB/s, ${Math.round(result.kcid.rssKB / 1024)} MB)`);
  }
  if (o.scaling) {
    result.scaling = [
      ...parts.map((p) => ({ fraction: p.fraction, bytes: p.bytes, seconds: +m[`part ${p.fraction}`].seconds.toFixed(4), rssKB: m[`part ${p.fraction}`].rssKB })),
      { fraction: 1, bytes, seconds: +kcid.seconds.toFixed(4), rssKB: kcid.rssKB },
    ];
    for (const p of parts) rmSync(p.file, { force: true });
  }
  if (!o.keep) rmSync(file, { force: true });
  return result;
}

function checkCounts(report, manifest) {
  const problems = [];
  const s = report.summary;
  if (report.inputs[0].packets !== manifest.packets) problems.push(`packets ${report.inputs[0].packets} != ${manifest.packets}`);
  for (const k of ['connections', 'requests', 'responses']) if (s[k] !== manifest[k]) problems.push(`${k} ${s[k]} != ${manifest[k]}`);
  return problems;
}

// ---- a broker's capture (lib/replay.mjs) ----------------------------------------------------------

/**
 * The recorded fixtures replayed as BROKER_CONCURRENCY clients at once, interleaved packet by
 * packet, against the same clients and packets one session at a time; and --jobs 2 on the one
 * concurrent capture. Both captures must give the same counts (connections, requests, responses).
 */
async function benchBroker(o, dir, tshark) {
  const name = 'broker';
  const fixtures = join(ROOT, 'fixtures');
  const file = join(dir, 'broker.pcap');
  const serialFile = join(dir, 'broker-serial.pcap');
  const keys = join(dir, 'broker.keys');
  log(`\n[${INPUTS[name].label}] replaying the fixtures to ${formatBytes(o.sizes[name])}, twice (${BROKER_CONCURRENCY} at once; one at a time) ...`);
  const t0 = performance.now();
  const manifest = generateBroker(file, o.sizes[name], o.seed, { fixtures, concurrency: BROKER_CONCURRENCY, keyLogPath: keys });
  const serial = generateBroker(serialFile, o.sizes[name], o.seed, { fixtures, concurrency: 1 });
  const bytes = statSync(file).size;
  log(`  ${formatBytes(bytes)}, ${manifest.packets} packets, ${manifest.clients} clients, ${manifest.connections} connections (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
  const tls = ['--tls-keylog', keys];
  const parts = o.scaling ? scalingParts(name, file, bytes, dir) : [];
  const out = join(dir, 'kcid-out.json');
  const serialOut = join(dir, 'kcid-serial-out.json');
  const runs = {
    cat: () => catRun(file),
    kcid: () => kcidRun(file, out, tls),
    serial: async () => {
      await catRun(serialFile);
      return kcidRun(serialFile, serialOut, tls);
    },
    jobs2: async () => {
      await catRun(file);
      return kcidRun(file, '/dev/null', [...tls, '--jobs', '2']);
    },
  };
  for (const p of parts) {
    runs[`part ${p.fraction}`] = async () => {
      await catRun(p.file);
      return kcidRun(p.file, '/dev/null', tls);
    };
  }
  log(`  cat, kcid, kcid one client at a time, kcid --jobs 2${o.scaling ? ', kcid on 1/4 and 1/2' : ''}: ${o.repeat} interleaved rounds ...`);
  const m = await interleaved(o.repeat, runs);
  const report = JSON.parse(readFileSync(out, 'utf8'));
  const serialReport = JSON.parse(readFileSync(serialOut, 'utf8'));
  rmSync(out, { force: true });
  rmSync(serialOut, { force: true });
  const check = ['connections', 'requests', 'responses'].filter((k) => report.summary[k] !== serialReport.summary[k]).map((k) => `${k} ${report.summary[k]} != ${serialReport.summary[k]} one at a time`);
  if (check.length > 0) log(`  WARNING: the concurrent capture's counts differ from the serial one's: ${check.join('; ')}`);
  manifest.requests = report.summary.requests;
  manifest.responses = report.summary.responses;
  let ts = null;
  if (tshark !== null) {
    log('  tshark ...');
    ts = await runTshark(tshark, file, bytes, o.tsharkBudget, dir, (f) => [...TSHARK_ARGS(f), '-o', `tls.keylog_file:${keys}`]);
  }
  const pick = (r) => ({ ...rates(r.seconds, bytes, manifest), rssKB: r.rssKB, runs: r.all });
  const result = {
    name,
    label: INPUTS[name].label,
    bytes,
    manifest,
    countsMatch: check.length === 0,
    kcidSummary: report.summary,
    cat: pick(m.cat),
    kcid: pick(m.kcid),
    tshark: ts === null ? null : { ...rates(ts.seconds, bytes, manifest), rssKB: ts.rssKB, prefixBytes: ts.prefixBytes, measuredSeconds: +ts.measuredSeconds.toFixed(3) },
    serial: { ...pick(m.serial), durationSec: serial.durationSec },
    jobs2: pick(m.jobs2),
    scaling: o.scaling
      ? [
          ...parts.map((p) => ({ fraction: p.fraction, bytes: p.bytes, seconds: +m[`part ${p.fraction}`].seconds.toFixed(4), rssKB: m[`part ${p.fraction}`].rssKB })),
          { fraction: 1, bytes, seconds: +m.kcid.seconds.toFixed(4), rssKB: m.kcid.rssKB },
        ]
      : null,
    bodies: null,
  };
  log(`  one client at a time: ${result.serial.seconds} s, ${fmt.mb(result.serial.rssKB)}; --jobs 2: ${result.jobs2.seconds} s (concurrent: ${result.kcid.seconds} s, ${fmt.mb(result.kcid.rssKB)})`);
  for (const p of parts) rmSync(p.file, { force: true });
  if (!o.keep) for (const f of [file, serialFile, keys]) rmSync(f, { force: true });
  return result;
}

// ---- start-up -------------------------------------------------------------------------------------

/** kcid on a capture with no packets against `node -e 0`, interleaved: what a run costs before its first packet. */
async function benchStartup(o, dir) {
  const empty = join(dir, 'empty.pcap');
  const h = Buffer.alloc(24);
  h.writeUInt32LE(0xa1b2c3d4, 0);
  h.writeUInt16LE(2, 4);
  h.writeUInt16LE(4, 6);
  h.writeUInt32LE(262144, 16);
  h.writeUInt32LE(1, 20);
  writeFileSync(empty, h);
  const rounds = Math.max(10, o.repeat * 4);
  log(`\n[start-up] kcid analyze on an empty capture against node -e 0: ${rounds} interleaved rounds ...`);
  const m = await interleaved(rounds, {
    node: () => measure(process.execPath, ['-e', '0']),
    kcid: () => measure(process.execPath, [KCID, 'analyze', empty, '-q', '--allow-empty']),
  });
  rmSync(empty, { force: true });
  return { node: { seconds: +m.node.seconds.toFixed(4), runs: m.node.all }, kcid: { seconds: +m.kcid.seconds.toFixed(4), code: m.kcid.code, runs: m.kcid.all }, ratio: +(m.kcid.seconds / m.node.seconds).toFixed(3) };
}

// ---- several files (kcid analyze --jobs) -------------------------------------------------------------

/**
 * Four produce-heavy captures of a quarter of --size each, analysed in one kcid run with --jobs 1
 * and --jobs 2. Skipped (and said so) while kcid has no --jobs option.
 */
async function benchMulti(o, dir) {
  const help = spawnSync(process.execPath, [KCID, 'analyze', '--help'], { encoding: 'utf8' });
  if (!/--jobs\b/.test(help.stdout)) return { skipped: 'kcid analyze has no --jobs option yet' };
  const each = Math.floor(o.sizes.produce / 4);
  log(`\n[several files] generating 4 x ${formatBytes(each)} ...`);
  const files = [];
  for (let i = 0; i < 4; i++) {
    const f = join(dir, `multi-${i}.pcap`);
    generate('produce', f, each, o.seed + 100 + i);
    files.push(f);
    await catRun(f);
  }
  const run = (jobs) => async () => {
    for (const f of files) await catRun(f);
    return measure(process.execPath, [KCID, 'analyze', ...files, '--format', 'json', '-q', '--jobs', String(jobs)], { nodeWrapper: KCID_RSS_WRAPPER });
  };
  log(`  --jobs 1, --jobs 2: ${o.repeat} interleaved rounds ...`);
  const m = await interleaved(o.repeat, { one: run(1), two: run(2) });
  const [one, two] = [m.one, m.two].map((r) => ({ seconds: +r.seconds.toFixed(4), rssKB: r.rssKB }));
  if (!o.keep) for (const f of files) rmSync(f, { force: true });
  return { files: 4, bytesEach: each, jobs1: one, jobs2: two, ratio: +(two.seconds / one.seconds).toFixed(3) };
}

// ---- Parquet export (kcid export) ----------------------------------------------------------------------

/**
 * chatty (the most rows per byte) exported to Parquet against `kcid requests --format ndjson` on
 * the same file, interleaved. Skipped while kcid has no export command.
 */
async function benchExport(o, dir) {
  const help = spawnSync(process.execPath, [KCID, '--help'], { encoding: 'utf8' });
  if (!/\bexport\b/.test(help.stdout)) return { skipped: 'kcid has no export command yet' };
  const file = join(dir, 'export-chatty.pcap');
  log(`\n[export] generating chatty, ${formatBytes(o.sizes.chatty)} ...`);
  const manifest = generate('chatty', file, o.sizes.chatty, o.seed);
  await catRun(file);
  const lake = join(dir, 'export-lake');
  const runs = {
    ndjson: () => measure(process.execPath, [KCID, 'requests', file, '--format', 'ndjson', '-q'], { nodeWrapper: KCID_RSS_WRAPPER }),
    export: () => {
      rmSync(lake, { recursive: true, force: true });
      return measure(process.execPath, [KCID, 'export', file, '--to', lake, '-q'], { nodeWrapper: KCID_RSS_WRAPPER });
    },
  };
  log(`  requests --format ndjson, export: ${o.repeat} interleaved rounds ...`);
  const m = await interleaved(o.repeat, runs);
  let parquetBytes = 0;
  for (const t of ['requests', 'connections', 'instances', 'findings']) parquetBytes += statSync(join(lake, t, 'capture=export-chatty', 'part-0.parquet')).size;
  if (!o.keep) rmSync(file, { force: true });
  rmSync(lake, { recursive: true, force: true });
  const pick = (r) => ({ seconds: +r.seconds.toFixed(4), rssKB: r.rssKB });
  return { bytes: manifest.bytes, requests: manifest.requests, parquetBytes, ndjson: pick(m.ndjson), export: pick(m.export), speed: +(m.ndjson.seconds / m.export.seconds).toFixed(3) };
}

// ---- output -------------------------------------------------------------------------------------------

const fmt = {
  n: (v) => (v === null || v === undefined ? '-' : v >= 1e6 ? `${(v / 1e6).toFixed(2)} M` : v >= 1e3 ? `${(v / 1e3).toFixed(1)} k` : String(v)),
  mb: (kb) => (kb === null || kb === undefined ? 'n/a' : `${(kb / 1024).toFixed(0)} MB`),
  x: (v) => (v === null || v === undefined || !Number.isFinite(v) ? '' : v >= 10 ? `${v.toFixed(0)}x` : `${v.toFixed(2)}x`),
};

function table(headers, rows, align) {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells) => `| ${cells.map((c, i) => (align[i] === 'r' ? String(c).padStart(widths[i]) : String(c).padEnd(widths[i]))).join(' | ')} |`;
  const sep = `|${widths.map((w, i) => (align[i] === 'r' ? `${'-'.repeat(w + 1)}:` : `:${'-'.repeat(w + 1)}`)).join('|')}|`;
  return [line(headers), sep, ...rows.map(line)].join('\n');
}

function mainTable(results) {
  const rows = [];
  for (const r of results) {
    const size = formatBytes(r.bytes);
    const tools = [['cat', r.cat], ['kcid', r.kcid], ...(r.tshark ? [['tshark', r.tshark]] : [])];
    for (const [tool, m] of tools) {
      const isKcid = tool === 'kcid';
      const note = tool === 'tshark' && m.prefixBytes ? ` (${formatBytes(m.prefixBytes)} prefix, scaled)` : '';
      rows.push([
        tool === 'cat' ? `${r.label}` : '',
        tool === 'cat' ? size : '',
        `${tool}${note}`,
        m.seconds.toFixed(3),
        m.mbPerSec.toFixed(0),
        fmt.n(m.packetsPerSec),
        fmt.n(m.requestsPerSec),
        fmt.mb(m.rssKB),
        isKcid ? fmt.x(r.kcid.mbPerSec / r.cat.mbPerSec) : '',
        isKcid && r.tshark ? fmt.x(r.kcid.mbPerSec / r.tshark.mbPerSec) : '',
      ]);
    }
  }
  return table(
    ['input', 'size', 'program', 'seconds', 'MB/s', 'packets/s', 'requests/s', 'peak RSS', 'kcid/cat', 'kcid/tshark'],
    rows,
    ['l', 'r', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
  );
}

/** kcid requests --bodies and tshark -T json -j kafka, each decoding every Kafka body of the input. */
function bodiesTable(results) {
  const rows = [];
  for (const r of results) {
    if (r.bodies === null || r.bodies === undefined) continue;
    const { kcid, tshark } = r.bodies;
    const label = tshark?.prefixBytes ? `tshark -T json -j kafka (${formatBytes(tshark.prefixBytes)} prefix, scaled)` : 'tshark -T json -j kafka';
    rows.push([r.label, formatBytes(r.bytes), 'kcid requests --bodies', kcid.seconds.toFixed(3), kcid.mbPerSec, fmt.mb(kcid.rssKB), tshark ? fmt.x(tshark.seconds / kcid.seconds) : '']);
    if (tshark) rows.push(['', '', label, tshark.seconds.toFixed(3), tshark.mbPerSec, fmt.mb(tshark.rssKB), '']);
  }
  return table(['input', 'size', 'program', 'seconds', 'MB/s', 'peak RSS', 'kcid/tshark'], rows, ['l', 'r', 'l', 'r', 'r', 'r', 'r']);
}

function scalingTable(results) {
  const rows = [];
  for (const r of results) {
    if (r.scaling === null) continue;
    const [q, h, f] = r.scaling;
    rows.push([
      r.label,
      ...[q, h, f].map((s) => `${s.seconds.toFixed(3)} s / ${fmt.mb(s.rssKB)}`),
      fmt.x(f.seconds / h.seconds),
      q.rssKB && f.rssKB ? fmt.x(f.rssKB / q.rssKB) : 'n/a',
    ]);
  }
  return table(['input', '1/4 size', '1/2 size', 'full size', 'time full/half', 'RSS full/quarter'], rows, ['l', 'r', 'r', 'r', 'r', 'r']);
}

function targets(results, multi, exp, startup) {
  const by = Object.fromEntries(results.map((r) => [r.name, r]));
  const out = [];
  const add = (name, ok, detail) => out.push({ target: name, met: ok, detail });
  for (const n of ['produce', 'fetch']) {
    const r = by[n];
    if (!r) continue;
    const cat = r.kcid.mbPerSec / r.cat.mbPerSec;
    add(`${r.label}: kcid >= 50% of cat's MB/s`, cat >= TARGETS.minCatRatio, `${(cat * 100).toFixed(1)}%`);
    if (r.tshark) {
      const ts = r.kcid.mbPerSec / r.tshark.mbPerSec;
      add(`${r.label}: kcid >= 50x tshark's MB/s`, ts >= TARGETS.minTsharkRatio, `${ts.toFixed(0)}x`);
    }
  }
  if (by.produce) add(`${by.produce.label}: peak RSS < 100 MB`, by.produce.kcid.rssKB !== null && by.produce.kcid.rssKB / 1024 < TARGETS.maxProduceRssMB, fmt.mb(by.produce.kcid.rssKB));
  const b = by.broker;
  if (b) {
    if (b.tshark) {
      const ts = b.kcid.packetsPerSec / b.tshark.packetsPerSec;
      add(`${b.label}: kcid >= 50x tshark's packets/s`, ts >= TARGETS.minBrokerTsharkRatio, `${ts.toFixed(1)}x`);
    }
    const serial = b.kcid.seconds / b.serial.seconds;
    add(`${b.label}: <= 1.3x the time of the same packets one client at a time`, serial <= TARGETS.maxBrokerOverSerial, `${serial.toFixed(2)}x`);
    const jobs = b.jobs2.seconds / b.kcid.seconds;
    add(`${b.label}: --jobs 2 on the one capture <= 62% of --jobs 1`, jobs <= TARGETS.maxBrokerJobsRatio, `${(jobs * 100).toFixed(0)}%`);
  }
  if (startup) add('start-up: an empty capture <= 1.2x node -e 0', startup.ratio <= TARGETS.maxStartupRatio, `${startup.ratio.toFixed(2)}x (${(startup.kcid.seconds * 1000).toFixed(0)} ms against ${(startup.node.seconds * 1000).toFixed(0)} ms)`);
  if (by.chatty) add('chatty: >= 1 M packets/s', by.chatty.kcid.packetsPerSec >= TARGETS.minChattyPacketsPerSec, `${fmt.n(by.chatty.kcid.packetsPerSec)} packets/s`);
  for (const r of results) {
    const all = [r.kcid.rssKB, ...(r.scaling ?? []).map((s) => s.rssKB)].filter((v) => v !== null);
    if (all.length > 0) {
      const peak = Math.max(...all) / 1024;
      add(`${r.label}: peak RSS < 150 MB at every size`, peak < TARGETS.maxRssMB, `${peak.toFixed(0)} MB`);
    }
    if (r.scaling) {
      const ratio = r.scaling[2].seconds / r.scaling[1].seconds;
      add(`${r.label}: full-size time <= 2.2x half-size`, ratio <= TARGETS.maxFullOverHalf, `${ratio.toFixed(2)}x`);
    }
  }
  if (multi && !multi.skipped) add('4 files: --jobs 2 <= 60% of --jobs 1', multi.ratio <= TARGETS.maxJobsRatio, `${(multi.ratio * 100).toFixed(0)}%`);
  if (exp && !exp.skipped) {
    add('chatty: export >= 50% of requests --format ndjson speed', exp.speed >= TARGETS.minExportSpeed, `${(exp.speed * 100).toFixed(0)}%`);
    if (exp.export.rssKB !== null && exp.ndjson.rssKB !== null) {
      const extra = (exp.export.rssKB - exp.ndjson.rssKB) / 1024;
      add('chatty: export peak RSS within 50 MB of ndjson', extra <= TARGETS.maxExportExtraRssMB, `+${extra.toFixed(0)} MB`);
    }
  }
  return out;
}

// ---- main ---------------------------------------------------------------------------------------------

async function main() {
  const o = parseArgs(process.argv.slice(2));
  if (!existsSync(join(ROOT, 'dist/cli/kcid.mjs'))) {
    process.stderr.write('bench: dist/ is missing: run `npm run build` first\n');
    process.exit(2);
  }
  const tshark = o.tshark ? which('tshark') : null;
  if (o.tshark && tshark === null) log('tshark not found: its column is left out');
  if (!hasGnuTime) log('GNU time (/usr/bin/time, Debian package `time`) not found: peak RSS is measured for kcid only');
  o.keep = o.dir !== null;
  const dir = o.dir ?? mkdtempSync(join(tmpdir(), 'kcid-bench-'));
  mkdirSync(dir, { recursive: true });
  const info = machine(tshark);
  log(`kcid benchmark: ${info.cpus} CPUs (${info.model}), node ${info.node}; inputs in ${dir}`);
  const results = [];
  let multi = null;
  let exp = null;
  let startup = null;
  try {
    if (o.startup) startup = await benchStartup(o, dir);
    for (const name of o.only) results.push(await benchInput(name, o, dir, tshark));
    if (o.multi) multi = await benchMulti(o, dir);
    if (o.export && o.only.includes('chatty')) exp = await benchExport(o, dir);
  } finally {
    if (!o.keep) rmSync(dir, { recursive: true, force: true });
  }
  info.loadAverageAtEnd = +loadavg()[0].toFixed(2);
  const met = targets(results, multi, exp, startup);
  const text = [
    `kcid benchmark, ${new Date().toISOString().slice(0, 10)}: ${info.cpus} CPUs (${info.model}), ${info.memoryGiB} GiB, ${info.os}, node ${info.node}${info.tshark ? `, ${info.tshark}` : ''}`,
    `median of ${o.repeat} interleaved rounds; files in the page cache; peak RSS is the child's maximum resident set size; load average ${info.loadAverageAtStart} at start, ${info.loadAverageAtEnd} at end`,
    '',
    mainTable(results),
    '',
    ...(o.scaling ? ['Scaling: kcid on the first 1/4, 1/2 and all of each input (seconds / peak RSS)', '', scalingTable(results), ''] : []),
    ...(o.bodies ? ['Every body decoded: kcid requests --bodies --format ndjson against tshark -T json -j kafka', '', bodiesTable(results), ''] : []),
    multi === null ? '' : multi.skipped ? `Several files: skipped (${multi.skipped})` : `Several files: 4 x ${formatBytes(multi.bytesEach)}, --jobs 1 ${multi.jobs1.seconds.toFixed(2)} s, --jobs 2 ${multi.jobs2.seconds.toFixed(2)} s (${(multi.ratio * 100).toFixed(0)}%)`,
    '',
    ...(exp === null ? [] : exp.skipped ? [`Export: skipped (${exp.skipped})`, ''] : [
      `Export (chatty, ${formatBytes(exp.bytes)}, ${exp.requests} requests): requests --format ndjson ${exp.ndjson.seconds.toFixed(2)} s / ${fmt.mb(exp.ndjson.rssKB)}, export ${exp.export.seconds.toFixed(2)} s / ${fmt.mb(exp.export.rssKB)} (${(exp.speed * 100).toFixed(0)}% of the speed), ${formatBytes(exp.parquetBytes)} of Parquet`,
      '',
    ]),
    ...(startup === null ? [] : [`Start-up: kcid analyze on an empty capture ${(startup.kcid.seconds * 1000).toFixed(0)} ms, node -e 0 ${(startup.node.seconds * 1000).toFixed(0)} ms (${startup.ratio.toFixed(2)}x)`, '']),
    ...results.filter((r) => r.serial).map((r) => `Broker: ${r.manifest.clients} clients, ${r.manifest.connections} connections, ${r.manifest.packets} packets; ${BROKER_CONCURRENCY} at once ${r.kcid.seconds.toFixed(2)} s / ${fmt.mb(r.kcid.rssKB)}, one at a time ${r.serial.seconds.toFixed(2)} s / ${fmt.mb(r.serial.rssKB)}, --jobs 2 ${r.jobs2.seconds.toFixed(2)} s / ${fmt.mb(r.jobs2.rssKB)}\n`),
    'Targets:',
    ...met.map((t) => `  ${t.met ? 'met    ' : 'NOT met'}  ${t.target}: ${t.detail}`),
    ...results.filter((r) => !r.countsMatch).map((r) => `  WARNING: kcid's counts on ${r.label} differ from the generator's`),
  ].join('\n');
  process.stdout.write(`${text}\n`);
  if (o.json) {
    writeFileSync(o.json, `${JSON.stringify({ machine: info, options: { quick: o.quick, sizes: o.sizes, seed: o.seed, repeat: o.repeat, tsharkBudget: o.tsharkBudget }, results, multi, export: exp, startup, targets: met }, null, 2)}\n`);
    log(`results written to ${o.json}`);
  }
}

main().catch((e) => {
  process.stderr.write(`bench: ${e.stack ?? e}\n`);
  process.exit(2);
});
