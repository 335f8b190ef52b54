/**
 * Config provenance (issue 26, item 11): the kcid.config.json in use is named in every report
 * format and by --verbose; --no-config ignores any config file.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { removeTmpFiles, tmpDir } from './builder/capture.js';
import { runKcid } from './helpers.js';
import { useDuckDb } from './duckdb.js';

const MIX = resolve('fixtures/kip1313-mix.pcapng');

afterAll(removeTmpFiles);

/** A repository whose root config switches the gate off, and a folder two levels down to run in. */
function repoWithConfig(): string {
  const root = tmpDir();
  mkdirSync(join(root, '.git'));
  writeFileSync(join(root, 'kcid.config.json'), JSON.stringify({ rules: { 'member-id-mismatch': 'off' }, failOn: 'none' }));
  const cwd = join(root, 'services', 'payments');
  mkdirSync(cwd, { recursive: true });
  return cwd;
}

const FOUND = '../../kcid.config.json';

describe('the config file in use is named', () => {
  const cwd = repoWithConfig();
  const kcid = (args: string[]) => runKcid(args, { cwd });

  it('in every format of analyze', async () => {
    const json = await kcid(['analyze', MIX, '--format', 'json']);
    expect(json.code).toBe(0);
    expect((JSON.parse(json.stdout) as { summary: { config?: string } }).summary.config).toBe(FOUND);
    const table = await kcid(['analyze', MIX]);
    expect(table.stdout.endsWith(`\n\nconfig: ${FOUND}\n`)).toBe(true);
    expect((await kcid(['analyze', MIX, '--format', 'junit'])).stdout).toContain(`      <property name="config" value="${FOUND}"/>\n    </properties>`);
    const sarif = JSON.parse((await kcid(['analyze', MIX, '--format', 'sarif'])).stdout) as { runs: { properties?: Record<string, unknown> }[] };
    expect(sarif.runs[0]!.properties).toEqual({ config: FOUND });
    expect((await kcid(['analyze', MIX, '--format', 'markdown'])).stdout).toContain(`\n\nRule settings from \`${FOUND}\`.\n\n`);
    expect((await kcid(['analyze', MIX, '--format', 'html'])).stdout).toMatch(/<footer><p class="note">Made by kcid [^<]*, rule settings from \.\.\/\.\.\/kcid\.config\.json\. Times are UTC\./);
  });

  it('with a baseline, SARIF keeps both properties', async () => {
    const baseline = join(cwd, 'baseline.json');
    await kcid(['analyze', MIX, '--write-baseline', baseline, '--format', 'json']);
    const sarif = JSON.parse((await kcid(['analyze', MIX, '--format', 'sarif', '--baseline', baseline])).stdout) as { runs: { properties?: Record<string, unknown> }[] };
    expect(sarif.runs[0]!.properties).toEqual({ suppressed: 21, config: FOUND });
  });

  it('by --verbose on stderr, and by merge', async () => {
    const r = await kcid(['analyze', MIX, '--format', 'json', '--verbose']);
    expect(r.stderr).toBe(`kcid: config: ${FOUND}\n`);
    const summary = join(cwd, 's.json');
    writeFileSync(summary, (await kcid(['analyze', MIX, '--format', 'summary-json'])).stdout);
    const merged = await kcid(['merge', summary, '--format', 'json', '--verbose']);
    expect([merged.stderr, (JSON.parse(merged.stdout) as { summary: { config?: string } }).summary.config]).toEqual([`kcid: config: ${FOUND}\n`, FOUND]);
  });

  it('--config FILE is named as given', async () => {
    const file = join(tmpDir(), 'gate.json');
    writeFileSync(file, JSON.stringify({ failOn: 'warning' }));
    const r = await kcid(['analyze', MIX, '--format', 'json', '--config', file, '--verbose']);
    expect([r.code, r.stderr, (JSON.parse(r.stdout) as { summary: { config?: string } }).summary.config]).toEqual([1, `kcid: config: ${file}\n`, file]);
  });

  it('--no-config ignores it: the gate fails again and nothing names a config', async () => {
    const r = await kcid(['analyze', MIX, '--format', 'json', '--no-config', '--verbose']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('kcid: config: none (--no-config)\n');
    const doc = JSON.parse(r.stdout) as { summary: { config?: string; findings: Record<string, number> } };
    expect(doc.summary.config).toBeUndefined();
    expect(doc.summary.findings).toEqual({ error: 15, warning: 5, info: 2 });
    for (const command of [['clients', MIX], ['telemetry', MIX], ['export', MIX, '--to', tmpDir()]]) {
      expect([command[0], (await kcid([...command, '--no-config', '-q'])).code]).toEqual([command[0], 0]);
    }
  });
});

describe('Parquet files name it in their key-value metadata', () => {
  const query = useDuckDb();
  const cwd = repoWithConfig();
  const kv = async (file: string) =>
    (await query(`SELECT decode(key) AS key, decode(value) AS value FROM parquet_kv_metadata('${file}') WHERE decode(key) LIKE 'kcid.%' ORDER BY 1`)).map((r) => [r.key, r.value]);

  it('analyze --format parquet and export', async () => {
    const findings = join(cwd, 'findings.parquet');
    expect((await runKcid(['analyze', MIX, '--format', 'parquet', '-o', findings], { cwd })).code).toBe(0);
    expect((await kv(findings)).find(([k]) => k === 'kcid.config')).toEqual(['kcid.config', FOUND]);
    const lake = tmpDir();
    expect((await runKcid(['export', MIX, '--to', lake, '-q'], { cwd })).code).toBe(0);
    expect((await kv(join(lake, 'requests', 'capture=kip1313-mix', 'part-0.parquet'))).find(([k]) => k === 'kcid.config')).toEqual(['kcid.config', FOUND]);
    const none = join(cwd, 'none.parquet');
    await runKcid(['analyze', MIX, '--format', 'parquet', '-o', none, '--no-config'], { cwd });
    expect((await kv(none)).map(([k]) => k)).not.toContain('kcid.config');
  });
});

describe('without a config file', () => {
  it('nothing is added, and --verbose says none was found', async () => {
    const cwd = tmpDir();
    mkdirSync(join(cwd, '.git'));
    const r = await runKcid(['analyze', MIX, '--format', 'json', '--verbose'], { cwd });
    expect(r.stderr).toBe('kcid: config: none (no kcid.config.json in the current folder or above it, up to the repository root)\n');
    expect('config' in (JSON.parse(r.stdout) as { summary: object }).summary).toBe(false);
    expect((await runKcid(['analyze', MIX], { cwd })).stdout).not.toContain('config:');
  });
});
