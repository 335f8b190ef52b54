/**
 * The README's and docs/'s example outputs are real runs: each block below is what its command
 * prints today. (The main example, the bundled capture's report, is checked against its golden in
 * fixtures.test.ts.) `UPDATE_README=1 npx vitest run test/readme.test.ts` writes them anew from the
 * same runs.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runKcid } from './helpers.js';

const README = new URL('../README.md', import.meta.url);
const DOCS = new URL('../docs/', import.meta.url);
const doc = (name: string): URL => new URL(name, DOCS);
const UPDATE = process.env.UPDATE_README === '1';

/** The code block that follows `marker` in `text`: its text and where it is. */
function blockAfter(text: string, marker: string, file: URL): { text: string; start: number; end: number } {
  const at = text.indexOf(marker);
  if (at < 0) throw new Error(`${file.pathname} has no '${marker}'`);
  const open = text.indexOf('\n```', at);
  const start = text.indexOf('\n', open + 1) + 1;
  const end = text.indexOf('\n```\n', start) + 1;
  return { text: text.slice(start, end), start, end };
}

/** Checks the block after `marker` in `file` is `expected`, or writes it there with UPDATE_README=1. */
function expectBlock(file: URL, marker: string, expected: string): void {
  const text = readFileSync(file, 'utf8');
  const block = blockAfter(text, marker, file);
  if (UPDATE && block.text !== expected) writeFileSync(file, text.slice(0, block.start) + expected + text.slice(block.end));
  else expect(block.text).toBe(expected);
}

/** The README and every page of docs/ (docs/fragments/ is the lead's inbox, not published). */
function pages(): { name: string; text: string }[] {
  const docs = readdirSync(DOCS).filter((n) => n.endsWith('.md')).sort();
  return [{ name: 'README.md', text: readFileSync(README, 'utf8') }, ...docs.map((n) => ({ name: `docs/${n}`, text: readFileSync(doc(n), 'utf8') }))];
}

describe('README', () => {
  it('is at most 500 lines: a user guide, with the rest in docs/', () => {
    const lines = readFileSync(README, 'utf8').split('\n');
    if (lines.at(-1) === '') lines.pop();
    expect(lines.length).toBeLessThanOrEqual(500);
  });

  it('has the two set-up commands that .ci/run runs', () => {
    const readme = readFileSync(README, 'utf8');
    expect(blockAfter(readme, '## Set up', README).text).toBe(
      'npm install && npx kcid analyze fixtures/kip1313-mix.pcapng   # install, build, analyse the bundled capture\n' +
        'npm test                                                       # the whole test suite\n',
    );
    const ci = readFileSync(new URL('../.ci/run', import.meta.url), 'utf8');
    const commands = ci.split('\n').filter((l) => /^(npm|npx) /.test(l) || /^[a-z].*\|\| status=\$\?$/.test(l));
    expect(commands).toEqual(['npm install', 'npx kcid analyze fixtures/kip1313-mix.pcapng || status=$?', 'npm test']);
  });

  it('and docs/ name no issue numbers or commit hashes', () => {
    for (const { name, text } of pages()) {
      expect([name, text.match(/\bissues? \d+|#\d{1,4}\b/gi)]).toEqual([name, null]);
      // A commit hash: 7 to 40 hex digits with a letter and a digit, outside code blocks (a pcap magic number is in one).
      const prose = text.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
      expect([name, prose.match(/\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b/g)]).toEqual([name, null]);
    }
  });

  it('links only to files and headings that exist', () => {
    const slug = (h: string): string => h.trim().toLowerCase().replace(/[^\p{L}\p{N}_\- ]/gu, '').replace(/ /g, '-');
    const anchors = new Map(pages().map(({ name, text }) => [name, new Set([...text.replace(/```[\s\S]*?```/g, '').matchAll(/^#+ (.*)$/gm)].map((m) => slug(m[1]!)))]));
    const broken: string[] = [];
    for (const { name, text } of pages()) {
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^https?:/.test(target!)) continue;
        const [path, anchor] = target!.split('#') as [string, string | undefined];
        const base = name.startsWith('docs/') ? 'docs/' : '';
        const file = path === '' ? name : new URL(path, `file:///r/${base}`).pathname.slice(3);
        let exists = true;
        try {
          readFileSync(new URL(`../${file}`, import.meta.url));
        } catch {
          exists = false;
        }
        if (!exists) broken.push(`${name}: ${target}`);
        else if (anchor !== undefined && anchors.has(file) && !anchors.get(file)!.has(anchor)) broken.push(`${name}: ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });
});

describe('Example outputs in docs/', () => {
  it('kcid telemetry on the confluent-kafka-javascript capture: its first instance, as printed', async () => {
    const r = await runKcid(['telemetry', 'fixtures/ckjs-mock-telemetry.pcap']);
    expect(r.code).toBe(0);
    // docs/telemetry.md shows the first instance (up to the blank line before the second), then '...'.
    const lines = r.stdout.split('\n');
    const starts = lines.flatMap((l, i) => (l.startsWith('Client instance ') ? [i] : []));
    const second = starts[1]!;
    expect(lines[second]).toMatch(/^Client instance AAAAAAAAASoAAAAAAAAAgQ  kcid-modern-consumer/);
    expectBlock(doc('telemetry.md'), '`npx kcid telemetry fixtures/ckjs-mock-telemetry.pcap`', `${lines.slice(0, second - 1).join('\n')}\n...\n`);
  });

  it('kcid requests --bodies: the first Produce row of the kcat capture, with the line breaks docs/formats.md adds', async () => {
    const r = await runKcid(['requests', 'fixtures/kcat-mock-produce.pcap', '--bodies', '--format', 'ndjson', '-p', '37237,37879,44615']);
    expect(r.code).toBe(0);
    const row = r.stdout.split('\n').find((l) => l.includes('"apiName":"Produce"'))!;
    expect(JSON.parse(row)).toMatchObject({ frame: 32, input: 1, requestCaptured: true });
    expectBlock(doc('formats.md'), 'From a real run (`kcid requests', `${row.replace(',"request":', ',\n "request":').replace(',"response":', ',\n "response":')}\n`);
  });
});

describe('README recipes', () => {
  it('run kcid with npx --no-install outside the checkout: a bare npx kcid would ask the npm registry for someone else\'s package', () => {
    const npx = pages()
      .flatMap(({ text }) => [...text.matchAll(/\n```[a-z]*\n([\s\S]*?)\n```\n/g)].map((m) => m[1]!))
      .flatMap((b) => b.split('\n'))
      .filter((l) => /\bnpx\b/.test(l));
    // The one bare npx is the checkout's own first command, right after npm install there.
    expect(npx.filter((l) => !l.includes('npx --no-install kcid'))).toEqual(['npm install && npx kcid analyze fixtures/kip1313-mix.pcapng   # install, build, analyse the bundled capture']);
    expect(npx.length).toBeGreaterThan(3);
  });

  it('docs/formats.md documents kcid clients --format json with its keys in the order kcid writes them', async () => {
    const rows = JSON.parse((await runKcid(['clients', 'fixtures/kip1313-mix.pcapng', '--format', 'json'])).stdout) as Record<string, unknown>[];
    const formats = readFileSync(doc('formats.md'), 'utf8');
    const start = formats.indexOf('`kcid clients --format json` writes an array');
    expect(start).toBeGreaterThan(0);
    const text = formats.slice(start, formats.indexOf('With\n`--instance ID`', start));
    const documented = [...text.matchAll(/`(\w+)`/g)].map((m) => m[1]!).filter((k) => k in rows[0]!);
    expect(documented).toEqual(Object.keys(rows[0]!));
  });
});
