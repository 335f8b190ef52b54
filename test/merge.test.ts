/**
 * Many captures: worker threads give the same report as one thread, and partial results merged
 * with `kcid merge` give the same bytes as analysing every capture at once.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runKcid } from './helpers.js';
import { tmpDir, tmpFile } from './builder/capture.js';

const FILES = ['fixtures/kip1313-mix.pcapng', 'fixtures/kcat-mock-produce.pcap', 'fixtures/ckjs-mock-telemetry.pcap', 'fixtures/kcat-mock-consumer-group.pcapng'];

const kcid = (args: string[]) => runKcid(args);

describe('several captures', () => {
  it('--jobs 2 (worker threads) gives the same bytes as --jobs 1', async () => {
    const one = await kcid(['analyze', ...FILES, '--format', 'json', '--jobs', '1']);
    const two = await kcid(['analyze', ...FILES, '--format', 'json', '--jobs', '2']);
    expect(two.stderr).toBe('');
    expect(two.stdout).toBe(one.stdout);
    expect(one.code).toBe(1);
    expect((JSON.parse(one.stdout) as { inputs: unknown[] }).inputs).toHaveLength(4);
  });

  it('--jobs 3 over six captures (this thread and two workers, each taking several) gives the same bytes as --jobs 1', async () => {
    const six = [...FILES, 'fixtures/kafkajs-mock-group.pcap', 'fixtures/kcat-mock-large.pcap.gz'];
    const one = await kcid(['analyze', ...six, '--format', 'summary-json', '--jobs', '1']);
    const three = await kcid(['analyze', ...six, '--format', 'summary-json', '--jobs', '3']);
    expect(three.stderr).toBe('');
    expect(three.stdout).toBe(one.stdout);
    expect((JSON.parse(one.stdout) as { inputs: unknown[] }).inputs).toHaveLength(6);
  });

  it('an instance seen in two captures is one instance with both brokers', async () => {
    // The same traffic seen at a second place (a copy under another name: the same name twice is refused).
    const copy = tmpFile('broker-2.pcapng', readFileSync(FILES[0]!));
    const r = await kcid(['analyze', FILES[0]!, copy, '--format', 'json', '--fail-on', 'none']);
    const doc = JSON.parse(r.stdout) as { instances: { clientInstanceId: string; connections: number; brokers: string[] }[] };
    const orders = doc.instances.find((i) => i.clientInstanceId === 'PyUE4E-JQdOaDAMF6CwzAQ')!;
    expect(orders.connections).toBe(4);
    expect(orders.brokers).toEqual(['10.1.0.11:9092', '10.1.0.12:9092']);
  });

  it('a bad capture among several is still one line, exit 2', async () => {
    const bad = tmpFile('bad.pcap', 'hello');
    for (const order of [[FILES[0]!, bad], [bad, FILES[0]!, FILES[1]!, FILES[2]!]]) {
      const r = await kcid(['analyze', ...order, '--jobs', '2']);
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(`kcid: ${bad}: not a pcap or pcapng file (starts with 68 65 6c 6c)\n`);
    }
  });
});

describe('kcid merge', () => {
  it('merging summary-json parts gives the same bytes as analysing all captures at once, in every format', async () => {
    const dir = tmpDir();
    const parts: string[] = [];
    for (const [i, file] of FILES.entries()) {
      const r = await kcid(['analyze', file, '--format', 'summary-json']);
      const part = join(dir, `part${i}.json`);
      writeFileSync(part, r.stdout);
      parts.push(part);
    }
    for (const format of ['json', 'table', 'ndjson', 'markdown', 'junit', 'sarif', 'html']) {
      const all = await kcid(['analyze', ...FILES, '--format', format]);
      const merged = await kcid(['merge', ...parts, '--format', format]);
      expect(merged.stderr).toBe('');
      expect(merged.code).toBe(all.code);
      expect(merged.stdout).toBe(all.stdout);
    }
  });

  it('a merge of merges is the same too: summary-json of a merge merges again', async () => {
    const dir = tmpDir();
    const a = join(dir, 'a.json');
    const b = join(dir, 'b.json');
    writeFileSync(a, (await kcid(['analyze', FILES[0]!, FILES[1]!, '--format', 'summary-json'])).stdout);
    writeFileSync(b, (await kcid(['analyze', FILES[2]!, '--format', 'summary-json'])).stdout);
    const ab = join(dir, 'ab.json');
    writeFileSync(ab, (await kcid(['merge', a, b, '--format', 'summary-json'])).stdout);
    const direct = await kcid(['analyze', FILES[0]!, FILES[1]!, FILES[2]!, '--format', 'json']);
    expect((await kcid(['merge', ab, '--format', 'json'])).stdout).toBe(direct.stdout);
  });

  it.each([
    ['not JSON', '{', /: not JSON \(/],
    ['another JSON document', '{"version":1}', /: not a kcid summary \(make one with 'kcid analyze --format summary-json'\)$/],
    ['a newer version', '{"kind":"kcid-summary","version":2}', /: summary version 2 is not supported \(expected 1\)$/],
    ['a bad input index', '{"kind":"kcid-summary","version":1,"inputs":[],"connections":[{"input":3}],"findings":[]}', /: an 'input' index points past its inputs$/],
  ])('rejects %s with one line, exit 2', async (_what, text, message) => {
    const file = tmpFile('part.json', text);
    const r = await kcid(['merge', file]);
    expect(r.code).toBe(2);
    expect(r.stderr.trimEnd()).toMatch(new RegExp(`^kcid: ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}${message.source.slice(0)}`));
    expect(r.stderr.split('\n')).toHaveLength(2);
  });

  it.each([
    ['fixtures/kip1313-mix.pcapng', 'pcapng'],
    ['fixtures/kcat-mock-produce.pcap', 'pcap'],
    ['fixtures/kcat-mock-nano.pcap', 'pcap'],
    ['fixtures/kcat-mock-large.pcap.gz', 'gzip'],
  ])('says %s is a capture, not a summary', async (file, kind) => {
    expect(await kcid(['merge', file])).toMatchObject({
      code: 2,
      stdout: '',
      stderr: `kcid: ${file}: is a ${kind} capture, not a summary (analyse it with 'kcid analyze', or make a summary with 'kcid analyze ${file} --format summary-json')\n`,
    });
  });

  it('keeps input file names and frame numbers of each part', async () => {
    const part = tmpFile('p.json', (await kcid(['analyze', FILES[0]!, '--format', 'summary-json'])).stdout);
    const again = tmpFile('q.json', readFileSync(part));
    const r = await kcid(['merge', part, again, '--format', 'json']);
    const doc = JSON.parse(r.stdout) as { inputs: { file: string }[]; findings: { input: number; frame: number }[] };
    expect(doc.inputs.map((i) => i.file)).toEqual([FILES[0], FILES[0]]);
    expect((await kcid(['merge', part, part])).stderr).toBe(`kcid: summary '${part}' is given twice\n`);
    expect((await kcid(['analyze', '-', '-'])).stderr).toBe("kcid: '-' (stdin) can be given only once\n");
    expect(doc.findings.filter((f) => f.input === 1)[0]!.frame).toBe(17);
    expect(readFileSync(part, 'utf8').startsWith('{"kind":"kcid-summary","version":1,')).toBe(true);
  });
});

describe('a summary another program wrote (issue 26.8)', () => {
  const HOSTILE_LINK = '<a href="https://attacker.example/">x</a>';
  const swaps = (v: unknown): unknown[] => {
    if (typeof v === 'string') return [7, null, [v], HOSTILE_LINK, 'a\x1b]0;title\x07b'];
    if (typeof v === 'number') return ['1', true, null, {}, -1, 1.5, 1e308];
    if (typeof v === 'boolean') return ['true', 1, null];
    if (v === null) return [{}, [], 'x', true];
    if (Array.isArray(v)) return ['x', {}, [{}], null];
    return ['x', [], null];
  };
  /** Every field of the first input, connection and finding, by path (activity and its kin have their own checks). */
  const leaves = (v: unknown, path: (string | number)[], out: (string | number)[][]) => {
    out.push(path);
    if (path.length > 0 && ['activity', 'notListed', 'latencyUs'].includes(String(path[path.length - 1]))) return;
    if (Array.isArray(v)) v.slice(0, 1).forEach((x, i) => leaves(x, [...path, i], out));
    else if (typeof v === 'object' && v !== null) for (const [k, x] of Object.entries(v)) leaves(x, [...path, k], out);
  };

  it('every field swapped to another type or to markup: refused in one line naming the field, or rendered safely in every format', async () => {
    const { parseSummary, SummaryError } = await import('../src/analysis/summary-io.js');
    const { buildReport } = await import('../src/analysis/report.js');
    const { renderHtml } = await import('../src/report/html/page.js');
    const { renderJson } = await import('../src/report/json.js');
    const { renderJunit } = await import('../src/report/junit.js');
    const { renderSarif } = await import('../src/report/sarif.js');
    const { renderMarkdown } = await import('../src/report/markdown.js');
    const { renderFindingsNdjson } = await import('../src/report/ndjson.js');
    const { renderTable } = await import('../src/report/table.js');
    const { makeStyle } = await import('../src/report/style.js');
    const text = (await kcid(['analyze', 'fixtures/kip1313-mix.pcapng', '--format', 'summary-json'])).stdout;
    const original = JSON.parse(text) as Record<string, unknown[]>;
    const paths: (string | number)[][] = [];
    for (const key of ['inputs', 'connections', 'findings']) leaves(original[key]![0], [key, 0], paths);
    let refused = 0;
    let rendered = 0;
    for (const path of paths.filter((p) => p.length > 2)) {
      const at = (doc: unknown) => path.slice(0, -1).reduce((o: any, k) => o[k], doc) as Record<string | number, unknown>;
      for (const swapped of swaps(at(original)[path[path.length - 1]!])) {
        const doc = JSON.parse(text);
        at(doc)[path[path.length - 1]!] = swapped;
        let summary;
        try {
          summary = parseSummary(JSON.stringify(doc), 'part.json');
        } catch (e) {
          expect(e).toBeInstanceOf(SummaryError);
          const message = (e as Error).message;
          expect(message.split('\n')).toHaveLength(1);
          expect(message).not.toMatch(/[\x00-\x1f]/);
          refused++;
          continue;
        }
        const report = buildReport(summary);
        const outputs = [renderHtml(report), renderJson(report), renderJunit(report), renderSarif(report, '0'), renderMarkdown(report), renderFindingsNdjson(report), renderTable(report, makeStyle(false))];
        expect(outputs[0]).not.toContain('<a href="https://attacker');
        // Markdown: markup only inside code spans, where it is text.
        expect(outputs[4]!.replace(/`[^`\n]*`/g, '')).not.toContain('<a href');
        for (const out of outputs) expect(out).not.toContain('\x1b]0;');
        rendered++;
      }
    }
    expect(refused).toBeGreaterThan(150);
    expect(rendered).toBeGreaterThan(20);
  });

  it('merge names the bad field in one line, exit 2, whatever the format', async () => {
    const doc = JSON.parse((await kcid(['analyze', 'fixtures/kip1313-mix.pcapng', '--format', 'summary-json'])).stdout);
    doc.findings[2].severity = HOSTILE_LINK;
    const file = tmpFile('hostile.json', JSON.stringify(doc));
    for (const format of ['table', 'html', 'json', 'junit', 'sarif', 'markdown', 'ndjson']) {
      const r = await kcid(['merge', file, '--format', format]);
      expect([format, r.code, r.stdout]).toEqual([format, 2, '']);
      expect(r.stderr).toBe(`kcid: ${file}: findings[2].severity: expected one of error, warning, info, got "<a href=\\"https://attacker.example/\\">…\n`);
    }
  });
});

describe('summaries read as a stream (issue 26.15)', () => {
  it('any chunk size and JSON layout gives what parsing the whole text gives', async () => {
    const { parseSummary } = await import('../src/analysis/summary-io.js');
    const { readSummaryFile } = await import('../src/analysis/summary-stream.js');
    for (const capture of ['fixtures/kip1313-mix.pcapng', 'fixtures/ckjs-mock-telemetry.pcap']) {
      const text = (await kcid(['analyze', capture, '--format', 'summary-json'])).stdout;
      const expected = parseSummary(text, 'x');
      for (const layout of [text, JSON.stringify(JSON.parse(text), null, 2), ` \n${JSON.stringify(JSON.parse(text), null, '\t')}\n\n`]) {
        const file = tmpFile('part.json', layout);
        for (const chunk of [1, 7, 4096, 1 << 20]) expect(readSummaryFile(file, () => {}, chunk)).toEqual(expected);
      }
    }
  });

  it('a damaged file is one line naming it, whatever the chunk size', async () => {
    const { readSummaryFile } = await import('../src/analysis/summary-stream.js');
    const text = (await kcid(['analyze', 'fixtures/kip1313-mix.pcapng', '--format', 'summary-json'])).stdout;
    const cases: [string, RegExp][] = [
      [text.slice(0, 5_000), /: not JSON \(unexpected end at byte 5000\)$|: not JSON \(unterminated string at byte 5000\)$/],
      [`${text.trimEnd()} x`, /: not JSON \(unexpected data after the document at byte \d+\)$/],
      ['[1, 2]', /: not a kcid summary/],
      ['{"kind": "kcid-summary", "version": 1, "inputs": [tru], "connections": [], "findings": []}', /: not JSON \(.*\)$/],
      ['{"kind" "kcid-summary"}', /: not JSON \(expected ':' at byte 8\)$/],
    ];
    for (const [body, message] of cases) {
      const file = tmpFile('bad.json', body);
      for (const chunk of [3, 1 << 20]) {
        let error: Error | undefined;
        try {
          readSummaryFile(file, () => {}, chunk);
        } catch (e) {
          error = e as Error;
        }
        expect(error?.name).toBe('SummaryError');
        expect(error!.message).toMatch(message);
        expect(error!.message.split('\n')).toHaveLength(1);
      }
    }
  });
});
