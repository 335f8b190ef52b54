/**
 * The commands, by name: each is a module with a pure `plan(inputs, options, context)` holding all
 * of its option checks and a `run(plan, io)` that reads, renders and returns the exit code. This
 * file only finds the command, loads the config file the commands with rules read, and turns a
 * plan's usage error into its line and exit 2. A new command is one module and one line in
 * COMMANDS (and its options in main.ts).
 */
import { availableParallelism } from 'node:os';
import { sanitize } from '../base/sanitize.js';
import { planAnalyze, runAnalyze } from './analyze-command.js';
import { planClients, runClients } from './clients-command.js';
import { CONFIG_FILE, loadConfig, type Config } from './config.js';
import { planExport, runExport } from './export-command.js';
import type { Io } from './io.js';
import { planMerge, runMerge } from './merge-command.js';
import { planned, type ConfigCliOptions, type GivenOnCli, type PlanContext } from './plan.js';
import { planRequests, runRequests } from './requests-command.js';
import { planTelemetry, runTelemetry } from './telemetry-command.js';

export interface CommandModule<O, P> {
  /** The command reads rule settings: kcid.config.json (or --config) is loaded for its plan. */
  readsConfig: boolean;
  plan(inputs: string[], options: O, ctx: PlanContext): P;
  run(plan: P, io: Io): Promise<number>;
}

const command = <O, P>(c: CommandModule<O, P>): CommandModule<O, P> => c;

export const COMMANDS = {
  analyze: command({ readsConfig: true, plan: planAnalyze, run: runAnalyze }),
  requests: command({ readsConfig: false, plan: planRequests, run: runRequests }),
  clients: command({ readsConfig: true, plan: planClients, run: runClients }),
  export: command({ readsConfig: true, plan: planExport, run: runExport }),
  merge: command({ readsConfig: true, plan: planMerge, run: runMerge }),
  telemetry: command({ readsConfig: true, plan: planTelemetry, run: runTelemetry }),
};

export type CommandName = keyof typeof COMMANDS;

const NO_CONFIG: Config = { file: null, rules: new Map() };

/** The config a command's plan sees: --config FILE, the nearest kcid.config.json, or none (--no-config, or a command without rules). */
export function configFor(readsConfig: boolean, o: ConfigCliOptions, io: Io): Config {
  if (!readsConfig || o.config === false) return NO_CONFIG;
  return loadConfig(o.config ?? null, io.cwd ?? process.cwd());
}

/** Which config file is in use, for --verbose: "config: kcid.config.json", or why there is none. */
export function configLine(config: Config, o: ConfigCliOptions): string {
  if (config.file !== null) return `config: ${sanitize(config.file)}`;
  return o.config === false ? 'config: none (--no-config)' : `config: none (no ${CONFIG_FILE} in the current folder or above it, up to the repository root)`;
}

/** Runs command `name` on commander's option values (shaped as that command's CliOptions). */
export async function runCommand(name: CommandName, inputs: string[], options: object, io: Io, given: GivenOnCli): Promise<number> {
  const c = COMMANDS[name] as unknown as CommandModule<object, unknown>;
  const o = options as ConfigCliOptions;
  const ctx: PlanContext = { config: configFor(c.readsConfig, o, io), given, cores: availableParallelism(), env: io.env };
  if (c.readsConfig && o.verbose === true) io.stderr.write(`kcid: ${configLine(ctx.config, o)}\n`);
  const p = planned(() => c.plan(inputs, options, ctx));
  if ('error' in p) {
    io.stderr.write(`kcid: ${p.error}\n`);
    return p.exitCode;
  }
  return c.run(p.plan, io);
}
