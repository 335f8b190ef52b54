/** Colour for terminal output: decided once by the CLI (a TTY, and no NO_COLOR), off otherwise. */
import { Chalk, type ChalkInstance } from 'chalk';
import type { Severity } from '../analysis/types.js';

export interface Style {
  color: boolean;
  chalk: ChalkInstance;
  severity(s: Severity, text?: string): string;
  dim(text: string): string;
  bold(text: string): string;
}

export function makeStyle(color: boolean): Style {
  const chalk = new Chalk({ level: color ? 1 : 0 });
  return {
    color,
    chalk,
    severity(s, text = s) {
      return s === 'error' ? chalk.red.bold(text) : s === 'warning' ? chalk.yellow(text) : chalk.cyan(text);
    },
    dim: (t) => chalk.dim(t),
    bold: (t) => chalk.bold(t),
  };
}

/** https://no-color.org: any non-empty NO_COLOR disables colour; FORCE_COLOR=0 too. */
export function wantsColor(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  if (env.FORCE_COLOR === '0') return false;
  return stream.isTTY === true;
}
