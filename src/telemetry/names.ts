/**
 * Names and limits that the stages above read without loading the decoders: importing index.ts
 * evaluates protobufjs and the decompressors, which only telemetry questions need (run.ts loads
 * them then, with a dynamic import).
 */

/** Kafka's compression type ids: 0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd. */
export const COMPRESSION_NAMES: readonly string[] = ['none', 'gzip', 'snappy', 'lz4', 'zstd'];

/** "zstd", or "unknown(7)" for a type Kafka does not define. */
export function compressionName(type: number): string {
  return COMPRESSION_NAMES[type] ?? `unknown(${type})`;
}

/** Default --max-telemetry-bytes: the most a blob may decompress to, and the largest PushTelemetry frame kept (16 MiB). */
export const DEFAULT_MAX_TELEMETRY_BYTES = 16 * 1024 * 1024;
