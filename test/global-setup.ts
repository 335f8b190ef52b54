/**
 * Before the tests: type-check the source (vitest does not) and bundle it, as `npm run build`
 * does, so that the tests that run bin/kcid as a process (and the worker threads of --jobs) run
 * the current source.
 */
import { execFileSync } from 'node:child_process';

export default function setup(): void {
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json', '--noEmit'], { stdio: 'inherit' });
  execFileSync(process.execPath, ['scripts/bundle.mjs'], { stdio: 'inherit' });
}
