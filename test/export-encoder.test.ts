/**
 * The encoder thread behind every Parquet file kcid writes (src/export/encoder.ts): files written
 * at the same time through it stay apart, each value type survives the trip (typed arrays,
 * nullable numbers, dictionary-indexed strings and UUIDs, lists), and a failure in the thread is
 * one ExportError naming the file, which is then not left behind.
 */
import { closeSync, existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { useDuckDb } from './duckdb.js';
import { removeTmpFiles, tmpDir } from './builder/capture.js';
import { ExportError } from '../src/export/errors.js';
import { ParquetTableWriter, ROW_GROUP_ROWS, type Table } from '../src/export/parquet.js';

const rows = useDuckDb();

afterAll(() => removeTmpFiles());

const UUID_A = new Uint8Array(16).fill(0xaa);
const UUID_B = new Uint8Array(16).fill(0xbb);

/** Every kind of column buffer: typed numbers, nullable numbers, dictionary strings and UUIDs, booleans and lists. */
const T: Table<number> = {
  name: 't',
  columns: [
    { name: 'n', type: 'int64', nullable: false, get: (n) => n },
    { name: 'time', type: 'timestamp', nullable: false, get: (n) => 1_764_547_200_000_000 + n },
    { name: 'small', type: 'int16', nullable: false, get: (n) => (n % 7) - 3 },
    { name: 'maybe', type: 'int32', nullable: true, get: (n) => (n % 5 === 0 ? null : n * 2) },
    { name: 'big', type: 'int64', nullable: true, get: (n) => (n % 4 === 0 ? null : 2 ** 40 + n) },
    { name: 'ms', type: 'double', nullable: true, get: (n) => (n % 3 === 0 ? null : n / 8) },
    { name: 's', type: 'string', nullable: true, get: (n) => (n % 6 === 0 ? null : `client-${n % 10}`) },
    { name: 'id', type: 'uuid', nullable: true, get: (n) => (n % 2 === 0 ? UUID_A : n % 3 === 0 ? null : UUID_B) },
    { name: 'flag', type: 'bool', nullable: false, get: (n) => n % 2 === 1 },
    { name: 'names', type: 'strings', nullable: false, get: (n) => (n % 3 === 0 ? [] : [`a${n % 2}`, 'b']) },
    { name: 'tags', type: 'tags', nullable: false, get: (n) => (n % 9 === 0 ? [{ tag: 1, size: n % 100 }] : []) },
  ],
};

const CHECK = (path: string) => `
  select count(*) as n, sum(n) as sum_n, min(time)::varchar as first, max(time)::varchar as last, sum(small) as small,
         count(maybe) as maybe, sum(maybe) as sum_maybe, count(big) as big, sum(big) as sum_big, count(ms) as ms, sum(ms) as sum_ms,
         count(s) as s, count(distinct s) as distinct_s, count(id) as id, count(distinct id) as distinct_id,
         count(*) filter (where flag) as flags, sum(len(names)) as names, sum(len(tags)) as tags,
         max(s) filter (where n = 7) as s7, (max(lower(hex(id))) filter (where n = 1)) as id1, max(tags) filter (where n = 9) as tags9
    from '${path}'`;

function expected(total: number) {
  const ns = Array.from({ length: total }, (_, n) => n);
  const sum = (f: (n: number) => number) => ns.reduce((a, n) => a + f(n), 0);
  const count = (f: (n: number) => boolean) => ns.filter(f).length;
  return {
    n: String(total),
    sum_n: String(sum((n) => n)),
    first: '2025-12-01 00:00:00+00',
    last: `2025-12-01 00:00:00.${String(total - 1).padStart(6, '0')}+00`,
    small: String(sum((n) => (n % 7) - 3)),
    maybe: String(count((n) => n % 5 !== 0)),
    sum_maybe: String(sum((n) => (n % 5 === 0 ? 0 : n * 2))),
    big: String(count((n) => n % 4 !== 0)),
    sum_big: String(ns.reduce((a, n) => a + (n % 4 === 0 ? 0n : 2n ** 40n + BigInt(n)), 0n)), // past 2^53: summed exactly
    ms: String(count((n) => n % 3 !== 0)),
    sum_ms: sum((n) => (n % 3 === 0 ? 0 : n / 8)),
    s: String(count((n) => n % 6 !== 0)),
    distinct_s: '10',
    id: String(count((n) => n % 2 === 0 || n % 3 !== 0)),
    distinct_id: '2',
    flags: String(count((n) => n % 2 === 1)),
    names: String(count((n) => n % 3 !== 0) * 2),
    tags: String(count((n) => n % 9 === 0)),
    s7: 'client-7',
    id1: 'bb'.repeat(16),
    tags9: [{ tag: 1, size: 9 }],
  };
}

describe('the encoder thread', () => {
  it('writes files side by side, every buffer kind intact, over several row groups', async () => {
    const dir = tmpDir();
    const [a, b] = [join(dir, 'a.parquet'), join(dir, 'b.parquet')];
    const wa = new ParquetTableWriter(T, a);
    const wb = new ParquetTableWriter(T, b);
    const total = ROW_GROUP_ROWS * 2 + 123;
    for (let n = 0; n < total; n++) {
      wa.add(n);
      if (n < 1000) wb.add(n);
    }
    wa.close();
    wb.close();
    expect(readdirSync(dir).sort()).toEqual(['a.parquet', 'b.parquet']);
    expect(await rows(CHECK(a))).toEqual([expected(total)]);
    expect(await rows(CHECK(b))).toEqual([expected(1000)]);
    expect(await rows(`select count(*) as groups from parquet_metadata('${a}') where path_in_schema = 'n'`)).toEqual([{ groups: '3' }]);
  });

  it('a failure in the thread is one ExportError naming the file, and leaves no file', () => {
    const path = join(tmpDir(), 'gone.parquet');
    const w = new ParquetTableWriter(T, path);
    // The descriptor closed under the writer: the thread's next write fails (EBADF).
    closeSync((w as unknown as { fd: number }).fd);
    let thrown: unknown;
    try {
      for (let n = 0; n < ROW_GROUP_ROWS * 4; n++) w.add(n);
      w.close();
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(ExportError);
    expect((thrown as Error).message).toMatch(new RegExp(`^cannot write ${path.replace(/[.]/g, '\\.')}: `));
    w.abort();
    expect(existsSync(path)).toBe(false);
    expect(readdirSync(join(path, '..'))).toEqual([]);
    // The thread goes on serving other files.
    const ok = join(tmpDir(), 'ok.parquet');
    const w2 = new ParquetTableWriter(T, ok);
    w2.add(1);
    w2.close();
    expect(existsSync(ok)).toBe(true);
  });

  it('the thread dying (out of its heap) is one ExportError with the cause within seconds, not a stall; the next file gets a new thread', () => {
    // One row of 40 strings of 4 MiB: cloned into the thread's heap (64 MB), more than it may hold.
    const HUGE: Table<number> = { name: 'huge', columns: [{ name: 'names', type: 'strings', nullable: false, get: () => Array.from({ length: 40 }, (_, i) => String(i).padEnd(4 << 20, 'x')) }] };
    const dir = tmpDir();
    const path = join(dir, 'huge.parquet');
    const w = new ParquetTableWriter(HUGE, path);
    const started = Date.now();
    let thrown: unknown;
    try {
      w.add(1);
      w.close();
    } catch (e) {
      thrown = e;
    }
    const ms = Date.now() - started;
    expect(thrown).toBeInstanceOf(ExportError);
    expect((thrown as Error).message).toBe(`cannot write ${path}: the Parquet encoder thread stopped: Worker terminated due to reaching memory limit: JS heap out of memory`);
    expect(ms).toBeLessThan(15_000);
    w.abort();
    expect(readdirSync(dir)).toEqual([]);
    const ok = join(dir, 'ok.parquet');
    const w2 = new ParquetTableWriter(T, ok);
    w2.add(1);
    w2.close();
    expect(readdirSync(dir)).toEqual(['ok.parquet']);
  });
});
