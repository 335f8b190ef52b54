/**
 * A lake the engines read (issue 26.13): every column of every table kcid writes has a Parquet
 * type that Spark, Trino, Athena and BigQuery read, held to test/data/parquet-engine-types.json
 * (kept with its sources); and every table is read back by a second Parquet implementation,
 * independent of DuckDB and of hyparquet-writer (Polars: Rust's own reader), with the same values
 * DuckDB reads, row for row.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pl from 'nodejs-polars';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useDuckDb } from './duckdb.js';
import { removeTmpFiles, tmpDir } from './builder/capture.js';
import { runKcid as kcid } from './helpers.js';

const rows = useDuckDb();
afterAll(() => removeTmpFiles());

const MIX = 'fixtures/kip1313-mix.pcapng';
/** Pushes whose metrics decode: rows in telemetry_metrics. */
const TELEMETRY = 'fixtures/ckjs-mock-telemetry.pcap';
const TABLES = ['requests', 'connections', 'instances', 'findings', 'telemetry', 'telemetry_metrics'];
const ENGINES = ['spark', 'trino', 'athena', 'bigquery'] as const;

interface EngineTypes {
  sources: Record<(typeof ENGINES)[number], string[]>;
  types: Record<string, Record<(typeof ENGINES)[number], string>>;
  refused: Record<string, string>;
}
const KNOWN = JSON.parse(readFileSync('test/data/parquet-engine-types.json', 'utf8')) as EngineTypes;

interface SchemaRow {
  name: string;
  type: string | null;
  type_length: string | null;
  num_children: string | null;
  converted_type: string | null;
  logical_type: string | null;
}

/** A logical type as DuckDB prints it, shortened: StringType() → STRING, TimestampType(isAdjustedToUTC=1, ... MICROS=...) → TIMESTAMP(MICROS,UTC). */
function logical(l: string | null): string | null {
  if (l === null) return null;
  if (l === 'StringType()') return 'STRING';
  if (l === 'UUIDType()') return 'UUID';
  const ts = /^TimestampType\(isAdjustedToUTC=(\d), unit=TimeUnit\((.*)\)\)$/.exec(l);
  if (ts !== null) {
    const unit = ['MILLIS', 'MICROS', 'NANOS'].find((u) => !new RegExp(`${u}=<null>`).test(ts[2]!));
    return `TIMESTAMP(${unit},${ts[1] === '1' ? 'UTC' : 'LOCAL'})`;
  }
  return l;
}

/** Each top-level column of a file's footer with its type written as the JSON list writes it. */
function columnTypes(schema: SchemaRow[]): Map<string, string> {
  let at = 1;
  const next = (): string => {
    const e = schema[at++]!;
    const children = Number(e.num_children ?? 0);
    if (children === 0) {
      const notes = [e.converted_type, logical(e.logical_type)].filter((x) => x !== null);
      return `${e.type}${e.type_length === null ? '' : `(${e.type_length})`}${notes.length === 0 ? '' : ` (${notes.join(', ')})`}`;
    }
    if (e.converted_type === 'LIST') {
      const repeated = schema[at++]!;
      expect(Number(repeated.num_children)).toBe(1);
      return `LIST<${next()}>`;
    }
    const fields: string[] = [];
    for (let i = 0; i < children; i++) {
      const name = schema[at]!.name;
      fields.push(`${name} ${next()}`);
    }
    return `STRUCT<${fields.join(', ')}>`;
  };
  const out = new Map<string, string>();
  const top = Number(schema[0]!.num_children);
  for (let i = 0; i < top; i++) {
    const name = schema[at]!.name;
    out.set(name, next());
  }
  return out;
}

let lake: string;
let files: string[];
beforeAll(async () => {
  lake = join(tmpDir(), 'lake');
  const r = await kcid(['export', MIX, TELEMETRY, '--to', lake]);
  expect(r.code).toBe(0);
  const single = tmpDir();
  const requests = join(single, 'requests.parquet');
  const findings = join(single, 'findings.parquet');
  expect((await kcid(['requests', MIX, '--format', 'parquet', '-o', requests])).code).toBe(0);
  expect((await kcid(['analyze', MIX, '--format', 'parquet', '-o', findings, '--fail-on', 'none'])).code).toBe(0);
  const parts = TABLES.flatMap((t) => readdirSync(join(lake, t)).map((c) => join(lake, t, c, 'part-0.parquet')));
  // Both captures have every table.
  expect(parts.length).toBe(TABLES.length * 2);
  files = [...parts, requests, findings];
});

describe('column types the engines read', () => {
  it('the list names a type in each of Spark, Trino, Athena and BigQuery for every entry, and its sources', () => {
    for (const e of ENGINES) expect(KNOWN.sources[e].length).toBeGreaterThan(0);
    for (const [type, engines] of Object.entries(KNOWN.types)) {
      for (const e of ENGINES) expect(`${type}: ${e} ${engines[e] ?? ''}`.trim()).not.toBe(`${type}: ${e}`);
      expect(KNOWN.refused[type]).toBeUndefined();
    }
  });

  it('every column of every table, in the layout and in the single files, has a type in the list (none refused)', async () => {
    const used = new Set<string>();
    for (const file of files) {
      const types = columnTypes((await rows(`select name, type, type_length::varchar as type_length, num_children::varchar as num_children, converted_type, logical_type from parquet_schema('${file}')`)) as unknown as SchemaRow[]);
      expect(types.size).toBeGreaterThan(4);
      for (const [column, type] of types) {
        expect({ file, column, refused: KNOWN.refused[type] ?? null }).toEqual({ file, column, refused: null });
        expect({ file, column, type, known: type in KNOWN.types }).toEqual({ file, column, type, known: true });
        used.add(type);
      }
    }
    // The client instance UUID is plain binary, not the UUID type Spark refuses.
    expect(used.has('BYTE_ARRAY')).toBe(true);
    expect([...used].filter((t) => t.includes('FIXED_LEN_BYTE_ARRAY'))).toEqual([]);
    // Every entry is one kcid writes (the list stays the list of what is written).
    expect([...used].sort()).toEqual(Object.keys(KNOWN.types).sort());
  });
});

/** A value as both readers give it, made comparable: numbers and bigints as text, bytes as hex, lists as JSON. */
function norm(v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (typeof v === 'bigint' || typeof v === 'number') return String(v);
  if (Array.isArray(v) || typeof v === 'object') return JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' || typeof x === 'number' ? String(x) : x));
  return v;
}

describe('read back by Polars (a second, independent Parquet reader)', () => {
  it('every table, column by column and row by row, as DuckDB reads it', async () => {
    const height = new Map<string, number>();
    for (const file of files) {
      const types = columnTypes((await rows(`select name, type, type_length::varchar as type_length, num_children::varchar as num_children, converted_type, logical_type from parquet_schema('${file}')`)) as unknown as SchemaRow[]);
      const df = pl.readParquet(file);
      expect(df.columns).toEqual([...types.keys()]);
      for (const [column, type] of types) {
        const q = `"${column}"`;
        const duck = type === 'BYTE_ARRAY' ? `lower(hex(${q}))` : type.startsWith('INT64 (TIMESTAMP') ? `epoch_us(${q})::varchar` : q;
        const want = (await rows(`select ${duck} as v from read_parquet('${file}')`)).map((r) => norm(r.v));
        let got: unknown[];
        if (type === 'BYTE_ARRAY') {
          // Polars hands binary to JavaScript only as a list of bytes.
          got = df.select(pl.col(column).cast(pl.List(pl.UInt8))).getColumn(column).toArray().map((b) => (b === null ? null : Buffer.from(b as unknown as number[]).toString('hex')));
        } else if (type.startsWith('INT64 (TIMESTAMP')) {
          got = df.select(pl.col(column).cast(pl.Int64)).getColumn(column).toArray().map(norm);
        } else {
          got = df.getColumn(column).toArray().map(norm);
        }
        expect({ file, column, values: got }).toEqual({ file, column, values: want });
      }
      const t = file.startsWith(lake) ? file.slice(lake.length + 1).split('/')[0]! : file;
      height.set(t, (height.get(t) ?? 0) + df.height);
    }
    // Rows in every table were compared.
    expect([...height.values()].filter((n) => n === 0)).toEqual([]);
    expect(height.size).toBe(TABLES.length + 2);
  });
});
