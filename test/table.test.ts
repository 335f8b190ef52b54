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

  it('leaves cells it cannot measure to cli-table3: wide characters, colour over several lines', () => {
    expect(plainTable(['A'], [['日本']])).toBeNull();
    expect(plainTable(['A'], [['\x1b[2ma\nb\x1b[22m']])).toBeNull();
    expect(plainTable(['A'], [['tab\there']])).toBeNull();
  });
});
