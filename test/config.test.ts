/**
 * Rule settings: --rule RULE=SEVERITY, kcid.config.json (or --config FILE), and how they merge.
 * Every error is one line naming where the mistake is; the exact text is the contract.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildReport } from '../src/analysis/report.js';
import { ConfigError, loadConfig, mergeSeverities, parseConfig, parseRuleSetting, suggest } from '../src/cli/config.js';
import { UsageError } from '../src/cli/options.js';
import { removeTmpFiles, tmpDir } from './builder/capture.js';
import { analyzeFiles } from './helpers.js';

afterAll(removeTmpFiles);

function folderWith(files: Record<string, string>): string {
  const dir = tmpDir();
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

describe('parseRuleSetting', () => {
  it.each([
    ['member-id-mismatch=off', ['member-id-mismatch', 'off']],
    ['client-id-after-first=warning', ['client-id-after-first', 'warning']],
    ['capture-gap=error', ['capture-gap', 'error']],
    [' tls-on-kafka-port = info ', ['tls-on-kafka-port', 'info']],
  ])('%j', (text, expected) => {
    expect(parseRuleSetting(text)).toEqual(expected);
  });

  it.each([
    ['member-id-mismatch', "invalid --rule 'member-id-mismatch' (expected RULE=SEVERITY, e.g. member-id-mismatch=off)"],
    ['member-id-mismach=off', "unknown rule 'member-id-mismach' in --rule (did you mean member-id-mismatch?)"],
    ['client-id-after-frist=off', "unknown rule 'client-id-after-frist' in --rule (did you mean client-id-after-first?)"],
    ['frobnicate=off', "unknown rule 'frobnicate' in --rule (see 'kcid rules' for the list)"],
    ['=off', "unknown rule '' in --rule (see 'kcid rules' for the list)"],
    ['member-id-mismatch=fatal', "invalid severity 'fatal' in --rule member-id-mismatch=fatal (expected error, warning, info or off)"],
    ['member-id-mismatch=OFF', "invalid severity 'OFF' in --rule member-id-mismatch=OFF (expected error, warning, info or off)"],
    ['member-id-mismatch=', "invalid severity '' in --rule member-id-mismatch= (expected error, warning, info or off)"],
    ['evil\x1b[2J=off', "unknown rule 'evil\\x1b[2J' in --rule (see 'kcid rules' for the list)"],
  ])('rejects %j', (text, message) => {
    expect(() => parseRuleSetting(text)).toThrow(new UsageError(message));
  });
});

describe('suggest', () => {
  it.each([
    ['capture-gaps', 'capture-gap'],
    ['CAPTURE-GAP', 'capture-gap'],
    ['zero-client-instance', 'zero-client-instance-id'],
    ['instance', null],
    ['x', null],
  ])('%j → %j', (text, expected) => {
    expect(suggest(text, ['capture-gap', 'zero-client-instance-id', 'member-id-mismatch'])).toBe(expected);
  });
});

describe('loadConfig', () => {
  it('is empty when there is no kcid.config.json in the folder and no --config', () => {
    expect(loadConfig(null, tmpDir())).toEqual({ file: null, rules: new Map() });
  });

  it('reads kcid.config.json from the folder', () => {
    const dir = folderWith({ 'kcid.config.json': '{"rules": {"member-id-mismatch": "off", "client-id-after-first": "warning"}}' });
    expect(loadConfig(null, dir)).toEqual({
      file: 'kcid.config.json',
      rules: new Map([
        ['member-id-mismatch', 'off'],
        ['client-id-after-first', 'warning'],
      ]),
    });
  });

  it('finds kcid.config.json in the nearest folder above, up to the repository root', () => {
    const repo = folderWith({ 'kcid.config.json': '{"failOn": "warning"}' });
    mkdirSync(join(repo, '.git'));
    mkdirSync(join(repo, 'captures/today'), { recursive: true });
    expect(loadConfig(null, join(repo, 'captures/today'))).toEqual({ file: '../../kcid.config.json', rules: new Map(), failOn: 'warning' });
    // A nearer one wins.
    writeFileSync(join(repo, 'captures/kcid.config.json'), '{"failOn": "info"}');
    expect(loadConfig(null, join(repo, 'captures/today'))).toMatchObject({ file: '../kcid.config.json', failOn: 'info' });
    // Errors name the file found.
    writeFileSync(join(repo, 'captures/kcid.config.json'), '{"failOn": "loud"}');
    expect(() => loadConfig(null, join(repo, 'captures/today'))).toThrow(new ConfigError("../kcid.config.json: failOn: invalid value 'loud' (expected error, warning, info or none)"));
    // --config wins over any found.
    writeFileSync(join(repo, 'captures/today/ci.json'), '{"failOn": "none"}');
    expect(loadConfig('ci.json', join(repo, 'captures/today'))).toMatchObject({ file: 'ci.json', failOn: 'none' });
  });

  it('does not look above the repository root', () => {
    const outer = folderWith({ 'kcid.config.json': '{"failOn": "warning"}' });
    mkdirSync(join(outer, 'repo/.git'), { recursive: true });
    mkdirSync(join(outer, 'repo/sub'));
    expect(loadConfig(null, join(outer, 'repo/sub'))).toEqual({ file: null, rules: new Map() });
    expect(loadConfig(null, join(outer, 'repo'))).toEqual({ file: null, rules: new Map() });
  });

  it('reads --config FILE relative to the folder, instead of kcid.config.json', () => {
    const dir = folderWith({ 'kcid.config.json': '{"rules": {"capture-gap": "off"}}', 'ci.json': '{"rules": {"capture-gap": "error"}, "failOn": "warning"}' });
    expect(loadConfig('ci.json', dir)).toEqual({ file: 'ci.json', rules: new Map([['capture-gap', 'error']]), failOn: 'warning' });
    expect(loadConfig(join(dir, 'ci.json'), '/').rules).toEqual(new Map([['capture-gap', 'error']]));
  });

  it('reads every key', () => {
    const text = JSON.stringify({ rules: { 'capture-gap': 'off' }, failOn: 'none', port: [9092, 19092, 9092], maxFrameBytes: '64MiB' });
    expect(parseConfig(text, 'k.json')).toEqual({ file: 'k.json', rules: new Map([['capture-gap', 'off']]), failOn: 'none', port: [9092, 19092], maxFrameBytes: 64 << 20 });
    expect(parseConfig('{"port": 9093, "maxFrameBytes": 1024}', 'k.json')).toEqual({ file: 'k.json', rules: new Map(), port: [9093], maxFrameBytes: 1024 });
  });

  it.each([
    ['a missing --config', 'missing.json', "--config missing.json: no such file"],
    ['a folder as --config', 'sub', '--config sub: is a directory'],
  ])('rejects %s', (_name, path, message) => {
    const dir = tmpDir();
    mkdirSync(join(dir, 'sub'));
    expect(() => loadConfig(path, dir)).toThrow(new ConfigError(message));
  });

  it('rejects a kcid.config.json that is a folder', () => {
    const dir = tmpDir();
    mkdirSync(join(dir, 'kcid.config.json'));
    expect(() => loadConfig(null, dir)).toThrow(new ConfigError('kcid.config.json: is a directory'));
  });

  it.each([
    ['empty', '', 'kcid.config.json: not valid JSON (unexpected end of input)'],
    ['a trailing comma', '{\n  "rules": {\n    "capture-gap": "off",\n  }\n}', 'kcid.config.json: not valid JSON (line 4, column 3)'],
    ['single quotes', "{'rules': {}}", 'kcid.config.json: not valid JSON (line 1, column 2)'],
    ['an array', '[]', 'kcid.config.json: expected a JSON object such as {"rules": {"member-id-mismatch": "off"}}'],
    ['null', 'null', 'kcid.config.json: expected a JSON object such as {"rules": {"member-id-mismatch": "off"}}'],
    ['a misspelt key', '{"rule": {}}', "kcid.config.json: unknown key 'rule' (did you mean rules?)"],
    ['a misspelt failOn', '{"failon": "error"}', "kcid.config.json: unknown key 'failon' (did you mean failOn?)"],
    ['an unknown key', '{"format": "junit"}', "kcid.config.json: unknown key 'format' (expected rules, failOn, port or maxFrameBytes)"],
    ['a __proto__ key', '{"__proto__": {"rules": {}}}', "kcid.config.json: unknown key '__proto__' (expected rules, failOn, port or maxFrameBytes)"],
    ['rules not an object', '{"rules": ["capture-gap"]}', 'kcid.config.json: rules: expected an object of rule id to severity, e.g. {"member-id-mismatch": "off"}'],
    ['an unknown rule', '{"rules": {"member-id-mismach": "off"}}', "kcid.config.json: rules: unknown rule 'member-id-mismach' (did you mean member-id-mismatch?)"],
    ['a rule far from any', '{"rules": {"frobnicate": "off"}}', "kcid.config.json: rules: unknown rule 'frobnicate' (see 'kcid rules' for the list)"],
    ['a __proto__ rule', '{"rules": {"__proto__": "off"}}', "kcid.config.json: rules: unknown rule '__proto__' (see 'kcid rules' for the list)"],
    ['a bad severity', '{"rules": {"capture-gap": "fatal"}}', "kcid.config.json: rules.capture-gap: invalid severity 'fatal' (expected error, warning, info or off)"],
    ['a severity not a string', '{"rules": {"capture-gap": false}}', 'kcid.config.json: rules.capture-gap: invalid severity false (expected error, warning, info or off)'],
    ['a bad failOn', '{"failOn": "off"}', "kcid.config.json: failOn: invalid value 'off' (expected error, warning, info or none)"],
    ['a port out of range', '{"port": [9092, 70000]}', 'kcid.config.json: port: invalid value [9092,70000] (expected a port number from 1 to 65535, or a list of them)'],
    ['a port as a string', '{"port": "9092"}', "kcid.config.json: port: invalid value '9092' (expected a port number from 1 to 65535, or a list of them)"],
    ['no ports', '{"port": []}', 'kcid.config.json: port: invalid value [] (expected a port number from 1 to 65535, or a list of them)'],
    ['a bad size', '{"maxFrameBytes": "lots"}', "kcid.config.json: invalid size 'lots' for maxFrameBytes (e.g. 104857600, 100MiB, 64KiB)"],
    ['a tiny size', '{"maxFrameBytes": 8}', "kcid.config.json: maxFrameBytes must be between 16 bytes and 2 GiB - 1, got '8'"],
    ['a size of another type', '{"maxFrameBytes": true}', 'kcid.config.json: maxFrameBytes: invalid value true (expected bytes, e.g. 104857600 or "100MiB")'],
    ['a hostile key', '{"\\u001b]0;x\\u0007": 1}', "kcid.config.json: unknown key '\\x1b]0;x\\x07' (expected rules, failOn, port or maxFrameBytes)"],
  ])('rejects %s with one line naming the file and key', (_name, text, message) => {
    const dir = folderWith({ 'kcid.config.json': text });
    expect(() => loadConfig(null, dir)).toThrow(new ConfigError(message));
    try {
      loadConfig(null, dir);
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      expect((e as ConfigError).oneLine).toBe(true);
    }
  });

  it('names the --config file as given in its errors', () => {
    const dir = folderWith({ 'ci.json': '{"rules": {"capture-gap": "loud"}}' });
    expect(() => loadConfig('ci.json', dir)).toThrow(new ConfigError("ci.json: rules.capture-gap: invalid severity 'loud' (expected error, warning, info or off)"));
  });

  it('leaves Object.prototype alone', () => {
    expect(() => parseConfig('{"rules": {"__proto__": {"polluted": "yes"}}}', 'k.json')).toThrow(ConfigError);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('mergeSeverities', () => {
  it('puts the command line over the config', () => {
    const config = parseConfig('{"rules": {"member-id-mismatch": "off", "capture-gap": "error"}}', 'k.json');
    const merged = mergeSeverities(config, ['member-id-mismatch=warning', 'tls-on-kafka-port=off'].map(parseRuleSetting));
    expect([...merged]).toEqual([
      ['member-id-mismatch', 'warning'],
      ['capture-gap', 'error'],
      ['tls-on-kafka-port', 'off'],
    ]);
    expect([...config.rules]).toEqual([
      ['member-id-mismatch', 'off'],
      ['capture-gap', 'error'],
    ]);
  });

  it('lets the last --rule for a rule win', () => {
    expect([...mergeSeverities({ rules: new Map() }, ['capture-gap=off', 'capture-gap=error'].map(parseRuleSetting))]).toEqual([['capture-gap', 'error']]);
  });

  it('drives buildReport: off drops a rule, other severities move it', async () => {
    const base = await analyzeFiles(['fixtures/kip1313-mix.pcapng']);
    const severities = mergeSeverities(parseConfig('{"rules": {"client-id-after-first": "off", "capture-gap": "error"}}', 'k.json'), [parseRuleSetting('member-id-mismatch=info')]);
    const report = buildReport({ version: 1, inputs: base.inputs, connections: base.connections, findings: base.findings.filter((f) => !['instance-id-multiple-hosts', 'instance-id-multiple-client-ids'].includes(f.rule)) }, { severities });
    expect(report.findings.map((f) => f.rule)).not.toContain('client-id-after-first');
    expect(report.findings.find((f) => f.rule === 'capture-gap')!.severity).toBe('error');
    expect(report.findings.find((f) => f.rule === 'member-id-mismatch')!.severity).toBe('info');
    expect(report.counts.findings).toEqual({ error: 14, warning: 4, info: 2 });
  });
});
