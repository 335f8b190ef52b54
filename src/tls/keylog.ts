/**
 * NSS key log files (the format of SSLKEYLOGFILE: browsers, curl, Node's 'keylog' event, OpenSSL
 * 3.5+, Java's extract-tls-secrets, Go's KeyLogWriter), and the same lines embedded in a pcapng
 * Decryption Secrets Block. A line is `LABEL <client random, 64 hex digits> <secret in hex>`.
 * Secrets never leave this module except to derive keys: nothing here is printed.
 */

/** The labels kcid uses; other NSS labels (EXPORTER_SECRET, early traffic, RSA) are read and ignored. */
export const KEYLOG_LABELS = [
  'CLIENT_RANDOM',
  'CLIENT_HANDSHAKE_TRAFFIC_SECRET',
  'SERVER_HANDSHAKE_TRAFFIC_SECRET',
  'CLIENT_TRAFFIC_SECRET_0',
  'SERVER_TRAFFIC_SECRET_0',
] as const;
export type KeyLogLabel = (typeof KEYLOG_LABELS)[number];

const OTHER_LABELS = new Set(['EXPORTER_SECRET', 'CLIENT_EARLY_TRAFFIC_SECRET', 'EARLY_EXPORTER_SECRET', 'RSA']);
const USED = new Set<string>(KEYLOG_LABELS);
const HEX = /^[0-9a-fA-F]+$/;

interface Entry {
  source: number;
  secrets: Map<string, Buffer>;
}

/** Secrets by client random, from any number of sources (files, the capture's own blocks). */
export class KeyLog {
  private readonly byRandom = new Map<string, Entry>();
  /** Per source: its name (a file name; never its content), lines skipped, connections matched. */
  readonly sources: { name: string; skipped: number; entries: number; matched: number }[] = [];

  /** Adds the lines of one source; returns its index. */
  add(name: string, text: string): number {
    const source = this.sources.length;
    const info = { name, skipped: 0, entries: 0, matched: 0 };
    this.sources.push(info);
    let start = 0;
    while (start < text.length) {
      let end = text.indexOf('\n', start);
      if (end < 0) end = text.length;
      const line = text.slice(start, end).trim();
      start = end + 1;
      if (line === '' || line.startsWith('#')) continue;
      const parts = line.split(/\s+/);
      const [label, random, secret] = parts;
      if (parts.length === 3 && OTHER_LABELS.has(label!) && HEX.test(random!) && HEX.test(secret!)) continue;
      if (
        parts.length !== 3 ||
        !USED.has(label!) ||
        random!.length !== 64 ||
        !HEX.test(random!) ||
        secret!.length % 2 !== 0 ||
        secret!.length < 32 ||
        secret!.length > 128 ||
        !HEX.test(secret!)
      ) {
        info.skipped++;
        continue;
      }
      const key = random!.toLowerCase();
      let entry = this.byRandom.get(key);
      if (entry === undefined) this.byRandom.set(key, (entry = { source, secrets: new Map() }));
      entry.secrets.set(label!, Buffer.from(secret!, 'hex'));
      info.entries++;
    }
    return source;
  }

  get size(): number {
    return this.byRandom.size;
  }

  /** The secrets for a ClientHello's random, counting the match for its source. */
  lookup(clientRandom: Buffer): ReadonlyMap<string, Buffer> | undefined {
    const entry = this.byRandom.get(clientRandom.toString('hex'));
    if (entry === undefined) return undefined;
    this.sources[entry.source]!.matched++;
    return entry.secrets;
  }
}
