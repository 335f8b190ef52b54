/**
 * A vitest reporter: at the end of the run, every skipped test by name with why (the reason given to
 * skipUnless in test/helpers.ts, or to ctx.skip), counted. Under CI=true, where .ci/run has
 * installed every tool the tests use and ../shared is present, a skip fails the run unless
 * test/skips-allowed.json lists it with its reason. A run filtered by name (-t) only lists.
 * It also fails the run when a test file left a scratch folder of this run in the temporary
 * directory (test/setup-file.ts removes what tmpFile and tmpDir made; the global teardown the rest).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { relative } from 'node:path';
import { scratchPrefix } from './builder/capture.js';
import type { Reporter, TestCase, TestModule, TestSuite, Vitest } from 'vitest/node';

export interface Skip {
  file: string;
  name: string;
  reason: string;
}

export interface Allowed {
  file: string;
  /** The test's full name (suites and test joined by " > "), or its start. */
  test: string;
  reason: string;
}

/** The reason a skipped test gives: its ctx.skip note, else the nearest skipReason up its suites. */
function reasonOf(t: TestCase): string {
  const r = t.result();
  if (r.state === 'skipped' && r.note !== undefined && r.note !== '') return r.note;
  if (t.options.mode === 'todo') return 'todo';
  for (let node: TestCase | TestSuite | TestModule = t; node.type !== 'module'; node = node.parent) {
    const why = node.meta().skipReason;
    if (why !== undefined && node.options.mode === 'skip') return why;
  }
  return 'no reason given';
}

export function skipsOf(modules: ReadonlyArray<TestModule>, root: string): Skip[] {
  const skips: Skip[] = [];
  for (const m of modules) {
    for (const t of m.children.allTests()) {
      if (t.result().state === 'skipped') skips.push({ file: relative(root, m.moduleId), name: t.fullName, reason: reasonOf(t) });
    }
  }
  return skips.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
}

/** The skips no allow-list entry covers. */
export function notAllowed(skips: readonly Skip[], allowed: readonly Allowed[]): Skip[] {
  return skips.filter((s) => !allowed.some((a) => a.file === s.file && s.name.startsWith(a.test)));
}

/** The lines printed: skips grouped by reason, each test named. */
export function skipLines(skips: readonly Skip[]): string[] {
  if (skips.length === 0) return ['No test skipped.'];
  const byReason = new Map<string, Skip[]>();
  for (const s of skips) byReason.set(s.reason, [...(byReason.get(s.reason) ?? []), s]);
  const lines = [`${skips.length} test${skips.length === 1 ? '' : 's'} skipped:`];
  for (const [reason, list] of byReason) {
    lines.push(`  ${list.length} because ${reason}:`);
    for (const s of list) lines.push(`    ${s.file} > ${s.name}`);
  }
  return lines;
}

export const isCi = (env: NodeJS.ProcessEnv): boolean => env.CI !== undefined && env.CI !== '' && env.CI !== '0' && env.CI !== 'false';

export default class SkipReport implements Reporter {
  private vitest: Vitest | undefined;

  onInit(vitest: Vitest): void {
    this.vitest = vitest;
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const root = this.vitest?.config.root ?? process.cwd();
    const skips = skipsOf(modules, root);
    const out = (s: string): boolean => process.stdout.write(`${s}\n`);
    out('');
    for (const l of skipLines(skips)) out(l);
    const left = readdirSync(tmpdir()).filter((n) => n.startsWith(scratchPrefix()));
    if (left.length > 0) {
      out(`Test files left ${left.length} scratch folder${left.length === 1 ? '' : 's'} in ${tmpdir()}, so the run fails: ${left.join(', ')}`);
      process.exitCode = 1;
    }
    const filtered = this.vitest?.config.testNamePattern !== undefined;
    if (!isCi(process.env) || filtered || skips.length === 0) return;
    const list = JSON.parse(readFileSync(new URL('./skips-allowed.json', import.meta.url), 'utf8')) as { allowed: Allowed[] };
    const bad = notAllowed(skips, list.allowed);
    if (bad.length === 0) return;
    out(`CI=true: ${bad.length} skipped test${bad.length === 1 ? ' is' : 's are'} not on test/skips-allowed.json, so the run fails:`);
    for (const s of bad) out(`  ${s.file} > ${s.name} (${s.reason})`);
    process.exitCode = 1;
  }
}
