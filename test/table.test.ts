import { describe, expect, it } from 'vitest';
import type { Report } from '../src/analysis/report.js';
import { makeClock } from '../src/report/clock.js';
import { makeStyle } from '../src/report/style.js';
import { renderInstances } from '../src/report/table.js';

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
