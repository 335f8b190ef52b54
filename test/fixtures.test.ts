/**
 * The built fixture is exactly what its generator writes, and kcid's output on it is the golden
 * output in test/golden/ (UPDATE_FIXTURES=1 / UPDATE_GOLDEN=1 write them again; review the diff).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderJson } from '../src/report/json.js';
import { makeStyle } from '../src/report/style.js';
import { renderTable } from '../src/report/table.js';
import { buildKip1313Mix } from './fixtures/kip1313-mix.js';
import { analyzeFiles, checkGolden, golden } from './helpers.js';

const FIXTURE = new URL('../fixtures/kip1313-mix.pcapng', import.meta.url);
describe('fixtures/kip1313-mix.pcapng', () => {
  it('is byte for byte what test/fixtures/kip1313-mix.ts writes', () => {
    const built = buildKip1313Mix().pcapng();
    if (process.env.UPDATE_FIXTURES === '1') writeFileSync(FIXTURE, built);
    expect(Buffer.compare(readFileSync(FIXTURE), built)).toBe(0);
  });

  it('analyses to the golden table and JSON', async () => {
    const report = await analyzeFiles(['fixtures/kip1313-mix.pcapng']);
    checkGolden('kip1313-mix.table.txt', renderTable(report, makeStyle(false)));
    // As kcid analyze --format json writes it: the conversations the telemetry rules judged are shown with --telemetry only.
    checkGolden('kip1313-mix.json', renderJson({ ...report, telemetry: [] }));
  });

  it('is what the README shows as the output of its first command', () => {
    expect(readFileSync(new URL('../README.md', import.meta.url), 'utf8')).toContain(readFileSync(golden('kip1313-mix.table.txt'), 'utf8'));
  });
});
