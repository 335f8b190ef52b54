#!/usr/bin/env node
/**
 * A/B of two kcid builds on a noisy host: both run at once, one per core, round after round, and
 * each round gives the ratio of their wall times. A host whose speed moves by a third from one
 * minute to the next moves both sides of a pair alike, where runs one after the other each meet
 * another host (2026-12-02: the same build took 4.96-6.89 s on chatty in consecutive runs).
 *
 *   node scripts/bench/pair.mjs --rev REV [--rounds 4] -- requests FILE --bodies --format ndjson
 *   node scripts/bench/pair.mjs --base DIR [--rounds 4] -- analyze FILE --format json
 *
 * --rev builds that commit in a temporary worktree (node_modules linked from this one, then
 * scripts/bundle.mjs); --base takes a folder that has bin/kcid and dist/ already. The arguments
 * after -- are kcid's (-q is added); output goes to /dev/null. Prints each side's median wall and
 * CPU time and peak RSS, and the median of the per-round ratios (this build / base).
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hasGnuTime } from './lib/measure.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

function usage(message) {
  if (message) process.stderr.write(`pair.mjs: ${message}\n`);
  process.stderr.write('usage: pair.mjs (--rev REV | --base DIR) [--rounds N] -- KCID-ARGS...\n');
  process.exit(2);
}

const argv = process.argv.slice(2);
const dash = argv.indexOf('--');
if (dash < 0 || dash === argv.length - 1) usage('give kcid\'s arguments after --');
const own = argv.slice(0, dash);
const kcidArgs = [...argv.slice(dash + 1), '-q'];
let rev = null;
let base = null;
let rounds = 4;
for (let i = 0; i < own.length; i++) {
  const value = () => own[++i] ?? usage(`${own[i - 1]} needs a value`);
  if (own[i] === '--rev') rev = value();
  else if (own[i] === '--base') base = resolve(value());
  else if (own[i] === '--rounds') rounds = Math.max(1, Number(value()));
  else usage(`unknown option ${own[i]}`);
}
if ((rev === null) === (base === null)) usage('give one of --rev and --base');
if (!hasGnuTime) usage('needs GNU time (/usr/bin/time, Debian package time) for CPU time and peak RSS');

let worktree = null;
if (rev !== null) {
  worktree = mkdtempSync(join(tmpdir(), 'kcid-pair-'));
  const run = (cmd, args, cwd) => {
    const r = spawnSync(cmd, args, { cwd, stdio: ['ignore', 'ignore', 'inherit'] });
    if (r.status !== 0) usage(`${cmd} ${args.join(' ')} failed`);
  };
  run('git', ['worktree', 'add', '--detach', worktree, rev], ROOT);
  symlinkSync(join(ROOT, 'node_modules'), join(worktree, 'node_modules'));
  run(process.execPath, ['scripts/bundle.mjs'], worktree);
  base = worktree;
}
if (!existsSync(join(base, 'bin/kcid'))) usage(`${base} has no bin/kcid`);

/** One kcid run under GNU time: { wall, cpu, rssKB }. */
function timed(root) {
  return new Promise((done, fail) => {
    const child = spawn('/usr/bin/time', ['-f', '%e %U %S %M', process.execPath, join(root, 'bin/kcid'), ...kcidArgs], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    child.on('error', fail);
    child.on('close', () => {
      const [wall, user, sys, rss] = err.trim().split('\n').pop().split(' ').map(Number);
      if (!(wall >= 0)) return fail(new Error(`kcid said: ${err.trim()}`));
      done({ wall, cpu: user + sys, rssKB: rss });
    });
  });
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

try {
  const runs = { base: [], this: [] };
  for (let i = 0; i < rounds; i++) {
    // Both at once; which one starts first alternates.
    const [a, b] = i % 2 === 0 ? await Promise.all([timed(base), timed(ROOT)]) : (await Promise.all([timed(ROOT), timed(base)])).reverse();
    runs.base.push(a);
    runs.this.push(b);
    process.stderr.write(`round ${i + 1}: base ${a.wall.toFixed(2)} s, this ${b.wall.toFixed(2)} s, ratio ${(b.wall / a.wall).toFixed(3)}\n`);
  }
  for (const [name, r] of Object.entries(runs)) {
    process.stdout.write(`${name.padEnd(4)}  wall ${median(r.map((x) => x.wall)).toFixed(3)} s  cpu ${median(r.map((x) => x.cpu)).toFixed(3)} s  peak RSS ${Math.round(Math.max(...r.map((x) => x.rssKB)) / 1024)} MB\n`);
  }
  const ratios = runs.this.map((x, i) => x.wall / runs.base[i].wall);
  process.stdout.write(`this / base, wall, median of ${rounds} pairs: ${median(ratios).toFixed(3)} (${ratios.map((x) => x.toFixed(3)).join(' ')})\n`);
} finally {
  if (worktree !== null) {
    spawnSync('git', ['worktree', 'remove', '--force', worktree], { cwd: ROOT });
    rmSync(worktree, { recursive: true, force: true });
  }
}
