#!/usr/bin/env node
/**
 * Where kcid spends its time on a capture: runs `kcid analyze FILE --format json` under
 * `node --cpu-prof` and prints the functions with the most self time, and the same grouped by
 * source file. `node scripts/bench/profile.mjs FILE [--top 25] [--keep DIR] [--kcid bin/kcid]`.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

export function profileKcid(file, { top = 25, keep = null, kcid = join(ROOT, 'bin/kcid'), args = ['analyze', file, '--format', 'json', '-q'] } = {}) {
  const dir = keep ?? mkdtempSync(join(tmpdir(), 'kcid-prof-'));
  const r = spawnSync(process.execPath, ['--cpu-prof', '--cpu-prof-dir', dir, kcid, ...args], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (r.status !== 0 && r.status !== 1) throw new Error(`kcid exited with ${r.status}`);
  const name = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  const profile = JSON.parse(readFileSync(join(dir, name), 'utf8'));
  if (keep === null) rmSync(dir, { recursive: true, force: true });
  return summarize(profile, top);
}

/** Self time per function and per file, in ms, from a V8 .cpuprofile. */
export function summarize(profile, top) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map();
  const dt = profile.timeDeltas;
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i];
    selfUs.set(id, (selfUs.get(id) ?? 0) + (dt[i] ?? 0));
  }
  const fns = new Map();
  const files = new Map();
  let total = 0;
  for (const [id, us] of selfUs) {
    const f = byId.get(id).callFrame;
    const file = f.url === '' ? '(native)' : f.url.startsWith('file:') ? relative(ROOT, fileURLToPath(f.url)) : f.url;
    const key = `${f.functionName || '(anonymous)'}  ${file}:${f.lineNumber + 1}`;
    fns.set(key, (fns.get(key) ?? 0) + us);
    files.set(file, (files.get(file) ?? 0) + us);
    total += us;
  }
  const sorted = (m) => [...m].sort((a, b) => b[1] - a[1]).slice(0, top).map(([k, us]) => ({ name: k, ms: +(us / 1000).toFixed(1), pct: +((100 * us) / total).toFixed(1) }));
  return { totalMs: +(total / 1000).toFixed(1), functions: sorted(fns), files: sorted(files) };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const opt = (n, d) => {
    const i = args.indexOf(n);
    if (i < 0) return d;
    const v = args[i + 1];
    args.splice(i, 2);
    return v;
  };
  const top = Number(opt('--top', '25'));
  const keep = opt('--keep', null);
  const kcid = resolve(opt('--kcid', join(ROOT, 'bin/kcid')));
  if (args.length !== 1) {
    process.stderr.write('usage: profile.mjs FILE [--top 25] [--keep DIR] [--kcid bin/kcid]\n');
    process.exit(2);
  }
  const s = profileKcid(args[0], { top, keep, kcid });
  process.stdout.write(`total ${s.totalMs} ms sampled\n\nself time by function:\n`);
  for (const f of s.functions) process.stdout.write(`${String(f.ms).padStart(9)} ms ${String(f.pct).padStart(5)}%  ${f.name}\n`);
  process.stdout.write('\nself time by file:\n');
  for (const f of s.files) process.stdout.write(`${String(f.ms).padStart(9)} ms ${String(f.pct).padStart(5)}%  ${f.name}\n`);
}
