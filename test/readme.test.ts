/**
 * The README's example outputs are real runs: each block below is what its command prints today.
 * (The main example, the bundled capture's report, is checked against its golden in fixtures.test.ts.)
 * `UPDATE_README=1 npx vitest run test/readme.test.ts` writes them anew from the same runs.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runKcid } from './helpers.js';

const README = new URL('../README.md', import.meta.url);
const UPDATE = process.env.UPDATE_README === '1';

/** The code block that follows `marker` in the README: its text and where it is. */
function blockAfter(readme: string, marker: string): { text: string; start: number; end: number } {
  const at = readme.indexOf(marker);
  if (at < 0) throw new Error(`the README has no '${marker}'`);
  const open = readme.indexOf('\n```', at);
  const start = readme.indexOf('\n', open + 1) + 1;
  const end = readme.indexOf('\n```\n', start) + 1;
  return { text: readme.slice(start, end), start, end };
}

/** Checks the block after `marker` is `expected`, or writes it there with UPDATE_README=1. */
function expectBlock(marker: string, expected: string): void {
  const readme = readFileSync(README, 'utf8');
  const block = blockAfter(readme, marker);
  if (UPDATE && block.text !== expected) writeFileSync(README, readme.slice(0, block.start) + expected + readme.slice(block.end));
  else expect(block.text).toBe(expected);
}

describe('README examples', () => {
  it('kcid telemetry on the confluent-kafka-javascript capture: its first instance, as printed', async () => {
    const r = await runKcid(['telemetry', 'fixtures/ckjs-mock-telemetry.pcap']);
    expect(r.code).toBe(0);
    // The README shows the first instance (up to the blank line before the second), then '...'.
    const lines = r.stdout.split('\n');
    const starts = lines.flatMap((l, i) => (l.startsWith('Client instance ') ? [i] : []));
    const second = starts[1]!;
    expect(lines[second]).toMatch(/^Client instance AAAAAAAAASoAAAAAAAAAgQ  kcid-modern-consumer/);
    expectBlock('`npx kcid telemetry fixtures/ckjs-mock-telemetry.pcap`', `${lines.slice(0, second - 1).join('\n')}\n...\n`);
  });

  it('kcid requests --bodies: the first Produce row of the kcat capture, with the line breaks the README adds', async () => {
    const r = await runKcid(['requests', 'fixtures/kcat-mock-produce.pcap', '--bodies', '--format', 'ndjson', '-p', '37237,37879,44615']);
    expect(r.code).toBe(0);
    const row = r.stdout.split('\n').find((l) => l.includes('"apiName":"Produce"'))!;
    expect(JSON.parse(row)).toMatchObject({ frame: 32, input: 1, requestCaptured: true });
    expectBlock('From a real run (`kcid requests', `${row.replace(',"request":', ',\n "request":').replace(',"response":', ',\n "response":')}\n`);
  });
});

describe('README recipes', () => {
  it('run kcid with npx --no-install outside the checkout: a bare npx kcid would ask the npm registry for someone else\'s package', () => {
    const readme = readFileSync(README, 'utf8');
    const blocks = [...readme.matchAll(/\n```[a-z]*\n([\s\S]*?)\n```\n/g)].map((m) => m[1]!);
    const npx = blocks.flatMap((b) => b.split('\n')).filter((l) => /\bnpx\b/.test(l));
    // The one bare npx is the checkout's own first command, right after npm install there.
    expect(npx.filter((l) => !l.includes('npx --no-install kcid'))).toEqual(['npm install && npx kcid analyze fixtures/kip1313-mix.pcapng   # install, build, analyse the bundled capture']);
    expect(npx.length).toBeGreaterThan(3);
  });

  it('documents kcid clients --format json with its keys in the order kcid writes them', async () => {
    const rows = JSON.parse((await runKcid(['clients', 'fixtures/kip1313-mix.pcapng', '--format', 'json'])).stdout) as Record<string, unknown>[];
    const readme = readFileSync(README, 'utf8');
    const doc = readme.slice(readme.indexOf('`kcid clients --format json` writes an array'), readme.indexOf('With\n`--instance ID`'));
    const documented = [...doc.matchAll(/`(\w+)`/g)].map((m) => m[1]!).filter((k) => k in rows[0]!);
    expect(documented).toEqual(Object.keys(rows[0]!));
  });
});
