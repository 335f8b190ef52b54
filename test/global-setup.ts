/**
 * Before the tests: `npm run build` (type-check the source, which vitest does not, and bundle it),
 * so that the tests that run bin/kcid as a process (and the worker threads of --jobs) run the
 * current source.
 */
import { execFileSync } from 'node:child_process';

export default function setup(): void {
  execFileSync('npm', ['run', '--silent', 'build'], { stdio: 'inherit' });
}
