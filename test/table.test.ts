import { describe, expect, it } from 'vitest';
import type { Report } from '../src/analysis/report.js';
import { makeStyle } from '../src/report/style.js';
import { renderInstances } from '../src/report/table.js';

const instance = (firstUs: number, lastUs: number) => ({
  clientInstanceId: null, source: 'none', clientIds: ['app'], software: [], clientAddresses: ['10.0.0.1'],
  brokers: ['10.0.0.2:9092'], connections: [{}], requests: 1, firstUs, lastUs,
});

const DAY1 = Date.UTC(2025, 11, 1, 23, 59, 59, 500) * 1000;
const DAY2 = Date.UTC(2025, 11, 2, 0, 0, 1, 250) * 1000;

describe('first and last seen', () => {
  it('show the time of day when every time falls on one day', () => {
    const out = renderInstances({ instances: [instance(DAY1, DAY1)] } as unknown as Report, makeStyle(false));
    expect(out).toContain('│ 23:59:59.500 │ 23:59:59.500 │');
  });

  it('show the date too when the times span midnight, so last seen is never before first seen', () => {
    const out = renderInstances({ instances: [instance(DAY1, DAY2)] } as unknown as Report, makeStyle(false));
    expect(out).toContain('│ 2025-12-01 23:59:59.500 │ 2025-12-02 00:00:01.250 │');
  });
});
