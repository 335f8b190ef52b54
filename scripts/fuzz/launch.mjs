// `npm run fuzz`: compiles the fuzzer with the sources and test builders it uses (scripts/fuzz/tsconfig.json)
// into node_modules/.cache/kcid-fuzz, then runs it with the arguments given. Works from a clean clone
// after `npm install`; nothing is written outside node_modules/.cache and test/regressions/.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const out = join(root, 'node_modules', '.cache', 'kcid-fuzz');
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', join(root, 'scripts', 'fuzz', 'tsconfig.json')], { stdio: 'inherit' });
// Under node_modules, Node does not look further up for package.json: say the output is ES modules.
mkdirSync(out, { recursive: true });
writeFileSync(join(out, 'package.json'), '{ "type": "module" }\n');
process.chdir(root);
await import(pathToFileURL(join(out, 'scripts', 'fuzz', 'main.js')).href);
