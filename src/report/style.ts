/** Colour for terminal output: decided once by the CLI (wantsColor), off otherwise. */
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

/**
 * Colour or not, as chalk and most CLIs decide: `--color`/`--no-color` (`flag`) win; then a
 * non-empty NO_COLOR (https://no-color.org) turns it off; then FORCE_COLOR turns it on (any value
 * but 0 or false, the empty one included) or off (0, false); otherwise colour on a terminal only.
 */
export function wantsColor(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv, flag?: boolean): boolean {
  if (flag !== undefined) return flag;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  const force = env.FORCE_COLOR;
  if (force !== undefined) return force !== '0' && force.toLowerCase() !== 'false';
  return stream.isTTY === true;
}
