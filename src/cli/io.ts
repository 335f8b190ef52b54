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
  /** The exit code so far, for a run whose output is closed before it ends (see {@link GateStatus}). */
  gate?: GateStatus;
  /**
   * Lets go of standard input: a run that stops with stdin still open (its output closed, or an
   * error once reading began) would otherwise keep the process waiting for more input.
   */
  releaseInput?: () => void;
  /** Registers a handler for Ctrl-C, SIGTERM and SIGHUP (follow mode); returns a function that removes it. */
  onInterrupt?: (handler: () => void) => () => void;
}

export const EXIT_CLEAN = 0;
export const EXIT_FINDINGS = 1;
export const EXIT_ERROR = 2;

/**
 * What a run has found so far, as an exit code: a command raises it as soon as it knows of a
 * finding at or above --fail-on (analyze and merge once the report is made, --follow with each
 * finding printed). When the reader of the output goes away (`kcid analyze F | head`), kcid stops
 * and exits with this code: a gate under `set -o pipefail` never passes on a finding.
 */
export class GateStatus {
  code: number = EXIT_CLEAN;

  raise(code: number): void {
    if (code > this.code) this.code = code;
  }
}

export function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: string };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}
