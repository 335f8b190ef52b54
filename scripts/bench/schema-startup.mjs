#!/usr/bin/env node
/**
 * Does bundling the generated schemas (src/kafka/schema/generated.ts, ~200 KB of JSON text) slow
 * `kcid --version`? Bundles the command twice (as scripts/bundle.mjs does), once as it is and once with
 * the registry imported, and times `--version` of each, interleaved.
 *
 *   node scripts/bench/schema-startup.mjs [runs]
 */
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const runs = Number(process.argv[2] ?? 30);
const dir = mkdtempSync(join(tmpdir(), 'kcid-startup-'));
const common = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  legalComments: 'none',
  logLevel: 'warning',
  banner: { js: "import { createRequire as kcidCreateRequire } from 'node:module';\nconst require = kcidCreateRequire(import.meta.url);" },
};
const a = join(dir, 'a/cli/kcid.mjs');
const b = join(dir, 'b/cli/kcid.mjs');
await build({ ...common, entryPoints: [join(root, 'src/cli/main.ts')], outfile: a });
await build({
  ...common,
  stdin: {
    contents: "import { builtinSchemas } from './src/kafka/schema/registry.ts'; globalThis.kcidSchemas = builtinSchemas; await import('./src/cli/main.ts');",
    resolveDir: root,
    loader: 'ts',
  },
  outfile: b,
});
const time = (f) => {
  const t = process.hrtime.bigint();
  execFileSync(process.execPath, [f, '--version']);
  return Number(process.hrtime.bigint() - t) / 1e6;
};
const ta = [];
const tb = [];
for (let i = 0; i < runs; i++) {
  ta.push(time(a));
  tb.push(time(b));
}
const med = (x) => x.sort((p, q) => p - q)[x.length >> 1].toFixed(1);
console.log(`kcid --version, median of ${runs} interleaved runs: without the schemas ${med(ta)} ms, with them bundled ${med(tb)} ms`);
rmSync(dir, { recursive: true, force: true });
