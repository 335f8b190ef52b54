/** What a run of the command line talks to, and how it ends: shared by main and the commands. */
import { readFileSync } from 'node:fs';
import type { TextStream } from './output.js';

export interface Io {
  stdout: TextStream;
  stderr: TextStream;
  env: NodeJS.ProcessEnv;
  /** Current folder (where kcid.config.json is looked for). */
  cwd?: string;
  /** Standard input is a terminal (nothing piped in). */
  stdinIsTTY?: boolean;
  /** --color (true) or --no-color (false); undefined: decided by the environment and the terminal. */
  color?: boolean;
  /** Registers a handler for Ctrl-C, SIGTERM and SIGHUP (follow mode); returns a function that removes it. */
  onInterrupt?: (handler: () => void) => () => void;
}

export const EXIT_CLEAN = 0;
export const EXIT_FINDINGS = 1;
export const EXIT_ERROR = 2;

export function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: string };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}
