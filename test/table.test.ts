import { describe, expect, it } from 'vitest';
import type { Report } from '../src/analysis/report.js';
import { makeClock } from '../src/report/clock.js';
import { makeStyle } from '../src/report/style.js';
import Table from 'cli-table3';
import { plainTable, renderInstances } from '../src/report/table.js';

const instance = (firstUs: number, lastUs: number) => ({
  clientInstanceId: null, source: 'none', clientIds: ['app'], software: [], clientAddresses: ['10.0.0.1'],
  brokers: ['10.0.0.2:9092'], connections: [{}], requests: 1, firstUs, lastUs,
});

const DAY1 = Date.UTC(2025, 11, 1, 23, 59, 59, 500) * 1000;
const DAY2 = Date.UTC(2025, 11, 2, 0, 0, 1, 250) * 1000;

describe('first and last seen', () => {
  it('carry the date and zone by default (-t ad), so a capture spanning days reads in order', () => {
    const out = renderInstances({ instances: [instance(DAY1, DAY2)] } as unknown as Report, makeStyle(false));
    expect(out).toContain('│ 2025-12-01T23:59:59.500Z │ 2025-12-02T00:00:01.250Z │');
  });

  it('follow -t: time of day, seconds since the first packet, epoch, local time', () => {
    const render = (clock: ReturnType<typeof makeClock>) => renderInstances({ instances: [instance(DAY1, DAY2)] } as unknown as Report, makeStyle(false), Infinity, clock);
    expect(render(makeClock('a'))).toContain('│ 23:59:59.500 │ 00:00:01.250 │');
    expect(render(makeClock('r', DAY1 - 1_000_000))).toContain('│ 1.000      │ 2.750     │');
    expect(render(makeClock('e'))).toContain('│ 1764633599.500 │ 1764633601.250 │');
    expect(render(makeClock('l', null, 'Asia/Kolkata'))).toContain('│ 2025-12-02T05:29:59.500+05:30 │ 2025-12-02T05:30:01.250+05:30 │');
  });
});

describe('plainTable', () => {
  /** The table as cli-table3 draws it with kcid's style (src/report/table.ts `table`). */
  const cliTable = (head: string[], rows: string[][]): string => {
    const t = new Table({ head, style: { head: [], border: [], compact: true }, chars: { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' } });
    for (const r of rows) t.push(r);
    return t.toString();
  };
  let seed = 5;
  const random = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
  const word = () => Array.from({ length: Math.floor(random() * 12) }, () => String.fromCharCode(0x20 + Math.floor(random() * 95))).join('');
  const cell = () => {
    const r = random();
    if (r < 0.1) return '';
    if (r < 0.2) return `\x1b[2m${word() || '(none)'}\x1b[22m`;
    if (r < 0.4) return Array.from({ length: 1 + Math.floor(random() * 4) }, word).join('\n');
    return word();
  };

  it('draws what cli-table3 draws, byte for byte: one-line and many-line cells, empty ones, colour codes on one line', () => {
    for (let n = 0; n < 300; n++) {
      const columns = 1 + Math.floor(random() * 6);
      const head = n % 5 === 0 ? [] : Array.from({ length: columns }, (_, i) => (i % 2 === 0 ? `\x1b[1mH${i}\x1b[22m` : `Head ${i}`));
      const rows = Array.from({ length: Math.floor(random() * 8) + (head.length === 0 ? 1 : 0) }, () => Array.from({ length: columns }, cell));
      const plain = plainTable(head, rows);
      expect(plain).not.toBeNull();
      expect(plain).toBe(cliTable(head, rows));
    }
  });

  /** cli-table3 with fixed column widths, word-wrapped at word boundaries, as the findings table asks for. */
  const cliFixed = (head: string[], rows: string[][], colWidths: number[]): string => {
    const t = new Table({ head, colWidths, wordWrap: true, wrapOnWordBoundary: true, style: { head: [], border: [], compact: true }, chars: { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' } });
    for (const r of rows) t.push(r);
    return t.toString();
  };

  it('with column widths, wraps and cuts what cli-table3 wraps and cuts, byte for byte', () => {
    const long = () => Array.from({ length: Math.floor(random() * 6) }, () => (random() < 0.3 ? 'x'.repeat(Math.floor(random() * 30)) : word())).join(random() < 0.5 ? ' ' : '  ');
    const fixedCell = () => {
      const r = random();
      if (r < 0.1) return '';
      if (r < 0.2) return `\x1b[31m${'abcdef'.slice(0, 1 + Math.floor(random() * 4))}\x1b[39m`;
      if (r < 0.3) return `${long()}\n${long()}`;
      return long();
    };
    for (let n = 0; n < 300; n++) {
      const columns = 1 + Math.floor(random() * 5);
      const colWidths = Array.from({ length: columns }, () => 6 + Math.floor(random() * 20));
      const head = Array.from({ length: columns }, (_, i) => (i % 2 === 0 ? `\x1b[1mH${i}\x1b[22m` : `Head ${i}`));
      const rows = Array.from({ length: 1 + Math.floor(random() * 6) }, () => Array.from({ length: columns }, fixedCell));
      const drawn = plainTable(head, rows, colWidths);
      expect(drawn).not.toBeNull();
      expect(drawn).toBe(cliFixed(head, rows, colWidths));
    }
  });

  it('measures display width: CJK and emoji take two columns, combining marks none, a ZWJ sequence is one emoji (issues 26.14, 27.13)', () => {
    expect(plainTable(['A'], [['日本'], ['e\u0301e'], ['👩‍👩‍👧'], ['ab']])).toBe(
      ['┌──────┐', '│ A    │', '│ 日本 │', '│ e\u0301e   │', '│ 👩‍👩‍👧   │', '│ ab   │', '└──────┘'].join('\n'),
    );
    // Cut to a column of 5: "…" after what fits of 4 columns, never half a character.
    expect(plainTable(['A'], [['日本語です'], ['👍👍👍👍']], [7])).toBe(['┌───────┐', '│ A     │', '│ 日本… │', '│ 👍👍… │', '└───────┘'].join('\n'));
  });

  it('leaves to cli-table3 only what it cannot draw: control characters, colour over several lines', () => {
    expect(plainTable(['A'], [['\x1b[2ma\nb\x1b[22m']])).toBeNull();
    expect(plainTable(['A'], [['tab\there']])).toBeNull();
    expect(plainTable(['A'], [['\x1b[2ma b c d e f\x1b[22m']], [6])).toBeNull();
  });
});

describe('wide wire strings in tables (issues 26.14, 27.13)', () => {
  const wideInstance = (clientId: string) => ({ ...instance(DAY1, DAY2), clientIds: [clientId] });
  /** Every line's display width, from node's Intl.Segmenter and the code points' own widths, not base/width.ts. */
  const columns = (line: string) => {
    let w = 0;
    for (const { segment } of new Intl.Segmenter('en', { granularity: 'grapheme' }).segment(line)) w += /[\u3000-\u9fff\u{1f300}-\u{1faff}]/u.test(segment) ? 2 : 1;
    return w;
  };

  it('a CJK ClientId keeps the instances table within the width, at 80 columns and in a pipe (200)', () => {
    const report = { instances: [wideInstance('注文サービス'.repeat(20))] } as unknown as Report;
    for (const width of [80, 200]) {
      const out = renderInstances(report, makeStyle(false), width).split('\n');
      const widest = Math.max(...out.map(columns));
      expect(widest).toBeLessThanOrEqual(width);
      expect(widest).toBeGreaterThan(width - 8);
      expect(out.join('')).not.toContain('\ufffd');
    }
  });

  it('emoji are never cut in half', () => {
    const report = { instances: [wideInstance('😀'.repeat(100))] } as unknown as Report;
    const out = renderInstances(report, makeStyle(false), 80);
    expect(out).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/);
    expect(out.split('\n').every((l) => columns(l) <= 80)).toBe(true);
  });

  it('a 32 KB ClientId of wide characters is laid out in seconds, not minutes (cli-table3: over four minutes here)', () => {
    const id = '注😀ب👩‍👩‍👧'.repeat(4_000).slice(0, 32_000);
    const report = { instances: [wideInstance(id)] } as unknown as Report;
    const t0 = performance.now();
    for (const width of [80, 200, Infinity]) renderInstances(report, makeStyle(false), width);
    // About 0.4 s on an idle core; the bound leaves room for a busy machine.
    expect(performance.now() - t0).toBeLessThan(20_000);
  });
});

describe('kcid requests and analyze with a wide ClientId on the wire (issue 27.13)', () => {
  it('rows fit the terminal by display width, and no emoji is cut in half', async () => {
    const { Scenario } = await import('./builder/scenario.js');
    const { apiVersionsRequestBody } = await import('./builder/kafka.js');
    const { ID_A, runKcid } = await import('./helpers.js');
    const s = new Scenario();
    const c = s.connect({ client: '10.2.0.21:40000', broker: '10.1.0.11:9092' });
    c.request({ apiKey: 18, apiVersion: 4, clientId: `注文😀${'サービス'.repeat(20)}`, clientInstanceId: ID_A, body: apiVersionsRequestBody({ softwareName: 'java', softwareVersion: '4.3.0' }) });
    const file = s.file('wide.pcap');
    const columns = (line: string) => {
      let w = 0;
      for (const { segment } of new Intl.Segmenter('en', { granularity: 'grapheme' }).segment(line.replace(/\x1b\[[0-9;]*m/g, ''))) w += /[\u3000-\u9fff\u{1f300}-\u{1faff}]/u.test(segment) ? 2 : 1;
      return w;
    };
    const halves = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
    for (const args of [['requests', file], ['analyze', file, '--fail-on', 'none'], ['clients', file]]) {
      const r = await runKcid(args, { tty: true, columns: 80 });
      expect([args[0], r.stderr]).toEqual([args[0], '']);
      const lines = r.stdout.split('\n');
      expect([args[0], Math.max(...lines.map(columns)) <= 80]).toEqual([args[0], true]);
      expect(r.stdout).not.toMatch(halves);
      expect(r.stdout).not.toContain('\ufffd');
      const piped = await runKcid(args);
      expect([args[0], Math.max(...piped.stdout.split('\n').map(columns)) <= (args[0] === 'requests' ? Infinity : 200)]).toEqual([args[0], true]);
    }
  });
});
