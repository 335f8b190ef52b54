/**
 * DuckDB for the export tests: one in-memory database per test file, opened before its tests and
 * closed after them, queried through {@link rows}.
 */
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { afterAll, beforeAll } from 'vitest';

/** Registers the file's database hooks; returns its query function. */
export function useDuckDb(): (query: string) => Promise<Record<string, unknown>[]> {
  let db: DuckDBInstance;
  let sql: DuckDBConnection;
  beforeAll(async () => {
    db = await DuckDBInstance.create(':memory:');
    sql = await db.connect();
  });
  afterAll(() => {
    sql.closeSync();
    db.closeSync();
  });
  /** Rows of a query as plain objects (BIGINT as text, as DuckDB's JSON form gives them). */
  return async (query) => (await sql.runAndReadAll(query)).getRowObjectsJson() as Record<string, unknown>[];
}
