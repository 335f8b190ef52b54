/**
 * Running one command and measuring it: wall time (from the runner's clock) and the child's peak
 * resident set size, from its resource usage as `/usr/bin/time -f %M` reports it (GNU time, Debian
 * package `time`). Without GNU time, a Node child (kcid) reports its own process.resourceUsage()
 * through a small wrapper, and other commands get no memory figure (KCID_BENCH_NO_GNU_TIME=1 forces
 * this, to try it).
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, openSync, closeSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const GNU_TIME = '/usr/bin/time';

export const hasGnuTime = (() => {
  if (process.env.KCID_BENCH_NO_GNU_TIME || !existsSync(GNU_TIME)) return false;
  const r = spawnSync(GNU_TIME, ['-f', '%M', 'true'], { encoding: 'utf8' });
  return r.status === 0 && /^\d+\s*$/.test(r.stderr.trim().split('\n').pop() ?? '');
})();

export function which(cmd) {
  const r = spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : null;
}

/**
 * Runs `cmd args` with stdout to `stdoutPath` (default /dev/null); resolves to
 * { seconds, rssKB, code, stderr }. `nodeWrapper`: when GNU time is missing and `cmd` is Node running
 * bin/kcid (args[0]), a script that runs kcid in-process and writes its maxRSS (KB) to KCID_BENCH_RSS.
 */
export async function measure(cmd, args, { stdoutPath = '/dev/null', nodeWrapper = null, env = process.env } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'kcid-bench-m-'));
  const rssFile = join(dir, 'rss');
  let argv;
  let childEnv = env;
  if (hasGnuTime) {
    argv = [GNU_TIME, '-f', '%M', '-o', rssFile, cmd, ...args];
  } else if (nodeWrapper !== null) {
    // args[0] is the Node program (bin/kcid): the wrapper runs its dist/cli/kcid.mjs in-process.
    argv = [process.execPath, nodeWrapper, ...args.slice(1)];
    childEnv = { ...env, KCID_BENCH_RSS: rssFile, KCID_BENCH_MAIN: join(args[0], '../../dist/cli/kcid.mjs') };
  } else {
    argv = [cmd, ...args];
  }
  const out = openSync(stdoutPath, 'w');
  let stderr = '';
  const t0 = process.hrtime.bigint();
  const code = await new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', out, 'pipe'], env: childEnv });
    child.stderr.on('data', (d) => {
      if (stderr.length < 65536) stderr += d;
    });
    child.on('error', reject);
    child.on('close', (c) => resolve(c));
  });
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  closeSync(out);
  let rssKB = null;
  if (existsSync(rssFile)) {
    const last = readFileSync(rssFile, 'utf8').trim().split('\n').pop();
    // GNU time writes "Command exited with non-zero status N" first when the command fails.
    if (/^\d+$/.test(last ?? '')) rssKB = Number(last);
  }
  rmSync(dir, { recursive: true, force: true });
  return { seconds, rssKB, code, stderr };
}

/**
 * `n` rounds of the named runs, one of each per round in the order given, then each one's median
 * (see {@link medianRun}). Interleaved rather than one after the other, so that a host that slows
 * down for a while (a noisy neighbour, the page cache reclaimed) slows one round of every figure
 * a ratio is made of, not every run of one of them.
 */
export async function interleaved(n, runs) {
  const all = Object.fromEntries(Object.keys(runs).map((k) => [k, []]));
  for (let i = 0; i < n; i++) for (const [k, run] of Object.entries(runs)) all[k].push(await run(i));
  return Object.fromEntries(Object.entries(all).map(([k, list]) => [k, medianRun(list)]));
}

/** The median run by seconds (the run itself, so its memory figure goes with its time), and every run's seconds. */
export function medianRun(list) {
  const runs = [...list].sort((a, b) => a.seconds - b.seconds);
  return { ...runs[Math.floor((runs.length - 1) / 2)], all: runs.map((r) => +r.seconds.toFixed(4)) };
}
