/**
 * Runs kcid in this process and, at exit, writes its peak RSS in KB (process.resourceUsage().maxRSS)
 * to the file named by KCID_BENCH_RSS: the benchmark's memory figure where GNU time is missing.
 * KCID_BENCH_MAIN names the dist/cli/kcid.mjs to run (default: this checkout's).
 */
import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const mainUrl = process.env.KCID_BENCH_MAIN ? pathToFileURL(process.env.KCID_BENCH_MAIN).href : new URL('../../../dist/cli/kcid.mjs', import.meta.url).href;
const { main } = await import(mainUrl);
process.on('exit', () => {
  const out = process.env.KCID_BENCH_RSS;
  if (out) writeFileSync(out, `${process.resourceUsage().maxRSS}\n`);
});
process.exitCode = await main(process.argv.slice(2));
