/** Names of captures in an export's layout. */
import { basename } from 'node:path';

/** A capture's name in its partition: the file name without .gz and the capture extension; '-' is stdin. */
export function captureName(file: string): string {
  if (file === '-') return 'stdin';
  const base = basename(file);
  const stem = base.replace(/\.gz$/i, '').replace(/\.(pcapng|pcap|cap|ntar)$/i, '');
  return stem === '' || stem === '.' || stem === '..' ? base : stem;
}

/**
 * A partition value as Hive writes it in a path (FileUtils.escapePathName): characters that
 * would change the path's meaning, and controls, as %XX. Engines decode it back.
 */
export function escapePartition(value: string): string {
  return value.replace(/[\u0000-\u001f"#%'*/:=?\\\u007f{}[\]^]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
}
