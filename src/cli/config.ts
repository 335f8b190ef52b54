/**
 * Rule settings: `--rule id=severity` on the command line, and `kcid.config.json` (in the current
 * folder or the nearest one above it up to the repository root, or named by --config) for what a project keeps in its repository:
 *
 *   { "rules": { "member-id-mismatch": "off", "client-id-after-first": "warning" },
 *     "failOn": "warning", "port": [9092, 19092], "maxFrameBytes": "64MiB" }
 *
 * Parsing is strict and pure: every mistake is one line naming the file and the key. The file is
 * the user's, not the wire's, but it is JSON all the same: its keys are only compared and copied
 * into Maps, never used to index a plain object.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import type { SeveritySetting } from '../analysis/report.js';
import { RULES, ruleById } from '../analysis/rules/index.js';
import { isJsonObject } from '../base/json-text.js';
import { sanitize } from '../base/sanitize.js';
import { UsageError, parseSize, type FailOn } from './options.js';

export const CONFIG_FILE = 'kcid.config.json';

/** A bad config file: one line, naming the file and the key. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  readonly oneLine = true;
}

export interface Config {
  /** The file read (as given, or kcid.config.json), or null when there was none. */
  file: string | null;
  /** Rule id → severity, in the file's order. */
  rules: Map<string, SeveritySetting>;
  failOn?: FailOn;
  /** Broker ports, as --port. */
  port?: number[];
  /** Bytes, as --max-frame-bytes. */
  maxFrameBytes?: number;
}

const SETTINGS: readonly SeveritySetting[] = ['error', 'warning', 'info', 'off'];
const FAIL_ON: readonly FailOn[] = ['error', 'warning', 'info', 'none'];
const KEYS = ['rules', 'failOn', 'port', 'maxFrameBytes'];

const q = (s: string): string => `'${sanitize(s)}'`;
const orList = (items: readonly string[]): string => `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`;

/** Edit distance, for "did you mean". Inputs are short (rule ids and keys). */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row.push(Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)));
    prev = row;
  }
  return prev[b.length]!;
}

/** The closest candidate within a third of its length (at least 2 edits allowed), if any. */
export function suggest(text: string, candidates: readonly string[]): string | null {
  if (text.length > 200) return null;
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const d = distance(text.toLowerCase(), c.toLowerCase());
    if (d < bestDistance && d <= Math.max(2, Math.floor(c.length / 3))) {
      best = c;
      bestDistance = d;
    }
  }
  return best;
}

const RULE_IDS = RULES.map((r) => r.id);

function unknownRule(id: string, where: string): string {
  const near = suggest(id, RULE_IDS);
  return `unknown rule ${q(id)}${where} (${near === null ? "see 'kcid rules' for the list" : `did you mean ${near}?`})`;
}

/** "member-id-mismatch=off" → ['member-id-mismatch', 'off']. Throws UsageError. */
export function parseRuleSetting(text: string): [string, SeveritySetting] {
  const eq = text.indexOf('=');
  if (eq < 0) throw new UsageError(`invalid --rule ${q(text)} (expected RULE=SEVERITY, e.g. member-id-mismatch=off)`);
  const id = text.slice(0, eq).trim();
  const severity = text.slice(eq + 1).trim();
  if (ruleById(id) === undefined) throw new UsageError(unknownRule(id, ' in --rule'));
  if (!(SETTINGS as readonly string[]).includes(severity)) {
    throw new UsageError(`invalid severity ${q(severity)} in --rule ${sanitize(text)} (expected ${orList(SETTINGS)})`);
  }
  return [id, severity as SeveritySetting];
}

/**
 * kcid.config.json in `cwd` or the nearest folder above it, as eslint and prettier find theirs;
 * the search stops at the repository root (a folder holding .git) or the file system's root.
 * Its path relative to `cwd`, or null when there is none.
 */
export function findConfig(cwd: string): string | null {
  let dir = resolve(cwd);
  for (;;) {
    const candidate = join(dir, CONFIG_FILE);
    if (existsSync(candidate)) return relative(cwd, candidate);
    const parent = dirname(dir);
    if (parent === dir || existsSync(join(dir, '.git'))) return null;
    dir = parent;
  }
}

/**
 * The config: `path` (from --config, relative to `cwd`; missing is an error), or the nearest
 * kcid.config.json ({@link findConfig}), or an empty config. Throws ConfigError.
 */
export function loadConfig(path: string | null, cwd: string): Config {
  const found = path === null ? findConfig(cwd) : null;
  if (path === null && found === null) return { file: null, rules: new Map() };
  const name = path ?? found!;
  const full = resolve(cwd, name);
  let text: string;
  try {
    text = readFileSync(full, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : `cannot read: ${(e as Error).message}`;
    throw new ConfigError(path === null ? `${name}: ${why}` : `--config ${sanitize(name)}: ${why}`);
  }
  return parseConfig(text, name);
}

/** Where JSON.parse stopped, as "line L, column C", when its message says. */
function jsonErrorAt(text: string, e: unknown): string {
  const m = /position (\d+)/.exec(e instanceof Error ? e.message : '');
  if (m === null) return 'unexpected end of input';
  const before = text.slice(0, Number(m[1]));
  const line = before.split('\n').length;
  return `line ${line}, column ${before.length - before.lastIndexOf('\n')}`;
}


/** A config file's text; `file` names it in errors. Throws ConfigError. */
export function parseConfig(text: string, file: string): Config {
  const fail = (what: string): never => {
    throw new ConfigError(`${sanitize(file)}: ${what}`);
  };
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    return fail(`not valid JSON (${jsonErrorAt(text, e)})`);
  }
  if (!isJsonObject(doc)) return fail('expected a JSON object such as {"rules": {"member-id-mismatch": "off"}}');
  const config: Config = { file, rules: new Map() };
  for (const key of Object.keys(doc)) {
    const value = doc[key];
    switch (key) {
      case 'rules':
        config.rules = parseRules(value, fail);
        break;
      case 'failOn':
        if (typeof value !== 'string' || !(FAIL_ON as readonly string[]).includes(value)) {
          fail(`failOn: invalid value ${show(value)} (expected ${orList(FAIL_ON)})`);
        }
        config.failOn = value as FailOn;
        break;
      case 'port':
        config.port = parsePortValue(value, fail);
        break;
      case 'maxFrameBytes':
        config.maxFrameBytes = parseSizeValue(value, fail);
        break;
      default: {
        const near = suggest(key, KEYS);
        fail(`unknown key ${q(key)} (${near === null ? `expected ${orList(KEYS)}` : `did you mean ${near}?`})`);
      }
    }
  }
  return config;
}

/** A JSON value as it appears in an error: strings quoted as the user wrote them. */
function show(value: unknown): string {
  return typeof value === 'string' ? q(value) : sanitize(JSON.stringify(value) ?? String(value));
}

function parseRules(value: unknown, fail: (what: string) => never): Map<string, SeveritySetting> {
  if (!isJsonObject(value)) return fail('rules: expected an object of rule id to severity, e.g. {"member-id-mismatch": "off"}');
  const rules = new Map<string, SeveritySetting>();
  for (const id of Object.keys(value)) {
    if (ruleById(id) === undefined) fail(`rules: ${unknownRule(id, '')}`);
    const s = value[id];
    if (typeof s !== 'string' || !(SETTINGS as readonly string[]).includes(s)) {
      fail(`rules.${id}: invalid severity ${show(s)} (expected ${orList(SETTINGS)})`);
    }
    rules.set(id, s as SeveritySetting);
  }
  return rules;
}

function parsePortValue(value: unknown, fail: (what: string) => never): number[] {
  const list = Array.isArray(value) ? value : [value];
  const ok = list.length > 0 && list.every((p) => Number.isInteger(p) && (p as number) >= 1 && (p as number) <= 65535);
  if (!ok) fail(`port: invalid value ${show(value)} (expected a port number from 1 to 65535, or a list of them)`);
  return [...new Set(list as number[])];
}

function parseSizeValue(value: unknown, fail: (what: string) => never): number {
  if (typeof value !== 'string' && typeof value !== 'number') return fail(`maxFrameBytes: invalid value ${show(value)} (expected bytes, e.g. 104857600 or "100MiB")`);
  try {
    return parseSize(String(value), 'maxFrameBytes');
  } catch (e) {
    return fail((e as Error).message);
  }
}

/** Severities in force: the config's rules, then the command line's --rule settings over them. */
export function mergeSeverities(config: Pick<Config, 'rules'>, cli: Iterable<readonly [string, SeveritySetting]>): Map<string, SeveritySetting> {
  const merged = new Map(config.rules);
  for (const [id, s] of cli) merged.set(id, s);
  return merged;
}
