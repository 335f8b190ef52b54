/**
 * The captures the differential test runs on, each with its Kafka ports (tshark needs them; kcid
 * must not): the recorded fixtures in fixtures/ (ports from their line in fixtures/README.md) and,
 * when the folder exists, the public captures under ../shared/captures/ (ports from the
 * "Kafka port" column of its MANIFEST.md).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { REPO } from './differential.js';

export interface Capture {
  /** Absolute path. */
  file: string;
  /** Path relative to the repository, for messages. */
  name: string;
  ports: number[];
  /** Where it comes from: recorded by record.sh (kept in fixtures/ or just now), built by a test
   * builder, or published by others. */
  origin: 'recorded' | 'built' | 'public' | 'recorded now';
}

const CAPTURE_FILE = /\.(pcap|pcapng|cap)(\.gz)?$/;
/** Kafka's registered port (IANA), for captures whose description names no other. */
const DEFAULT_KAFKA_PORT = 9092;

export const FIXTURES = join(REPO, 'fixtures');
export const SHARED_CAPTURES = join(REPO, '..', 'shared', 'captures');

/** The numbers of a port list as the README writes them: "37237,37879,44615 (3 connections)" or
 * "35717 (node 1), 40797 (node 2), 41351 (node 3)". Parenthesised remarks are not ports. */
export function portsIn(text: string): number[] {
  return [...text.replace(/\([^)]*\)/g, ' ').matchAll(/\d+/g)].map((m) => Number(m[0]));
}

/**
 * Ports of each file described in fixtures/README.md: a line "- `NAME` — ...; ports P,Q,R (...); ...".
 * A file described "same ... as above" still names its own ports.
 */
export function fixturePorts(readme: string): Map<string, number[]> {
  const ports = new Map<string, number[]>();
  for (const line of readme.split('\n')) {
    const m = /^- `([^`]+)`.*?; ports (\d+(?: \([^()]*\))?(?:,\s*\d+(?: \([^()]*\))?)*)/.exec(line);
    if (m !== null) ports.set(m[1]!, portsIn(m[2]!));
  }
  return ports;
}

/**
 * Every capture file in fixtures/. Recorded ones have their mock cluster's ports in the README; the
 * others were built by a test builder (test/fixtures/) on Kafka's registered port.
 */
export function fixtureCaptures(): Capture[] {
  const ports = fixturePorts(readFileSync(join(FIXTURES, 'README.md'), 'utf8'));
  return readdirSync(FIXTURES)
    .filter((f) => CAPTURE_FILE.test(f))
    .sort()
    .map((f) => {
      const p = ports.get(f);
      return { file: join(FIXTURES, f), name: `fixtures/${f}`, ports: p ?? [DEFAULT_KAFKA_PORT], origin: p === undefined ? 'built' : 'recorded' };
    });
}

/** Ports per file from the summary table of a MANIFEST.md: "| owner__repo/file | ... | 9092 | ...". */
export function manifestPorts(manifest: string): Map<string, number[]> {
  const ports = new Map<string, number[]>();
  const lines = manifest.split('\n');
  const header = lines.find((l) => l.startsWith('| File |'));
  if (header === undefined) return ports;
  const column = header.split('|').findIndex((c) => c.trim() === 'Kafka port');
  for (const line of lines) {
    if (!line.startsWith('| ') || line === header) continue;
    const cells = line.split('|');
    const file = /^\s*([^\s(]+)/.exec(cells[1] ?? '')?.[1];
    const p = portsIn(cells[column] ?? '');
    if (file !== undefined && p.length > 0) ports.set(file, p);
  }
  return ports;
}

function walk(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((e) => {
      const p = join(dir, e);
      return statSync(p).isDirectory() ? walk(p) : [p];
    });
}

/**
 * The public captures under ../shared/captures/, named here so that where the folder is absent the
 * tests over them are still there, listed as skipped by name (test/capture.test.ts holds this list
 * to the folder when it is present).
 */
export const PUBLIC_CAPTURES = [
  'public/40t__go-sniffer/kafka.pcap',
  'public/arkime__arkime/kafka.pcap',
  'public/deepflowio__deepflow/00-produce-v2.pcap',
  'public/deepflowio__deepflow/00-produce-v7-sw8.pcap',
  'public/deepflowio__deepflow/00-produce-v9.pcap',
  'public/deepflowio__deepflow/01-fetch-v12-ok.pcap',
  'public/deepflowio__deepflow/01-fetch-v12-perf.pcap',
  'public/deepflowio__deepflow/01-fetch-v12-unknown.pcap',
  'public/deepflowio__deepflow/11-join-group-v7.pcap',
  'public/deepflowio__deepflow/13-leave-group-v4.pcap',
  'public/deepflowio__deepflow/14-sync-group-v5.pcap',
  'public/deepflowio__deepflow/18-api-versions-v3.pcap',
  'public/deepflowio__deepflow/mixed-with-unsupported.pcap',
  'public/deepflowio__deepflow/produce-v9.pcap',
  'public/ntop__nDPI/kafka.pcapng',
] as const;

/** Is ../shared/captures there? Without it the tests over public captures are skipped (NO_SHARED says why). */
export const HAVE_SHARED = existsSync(SHARED_CAPTURES);

/** The capture files under ../shared/captures/ as the folder holds them (none when it is absent). */
export function sharedCaptureFiles(): string[] {
  return HAVE_SHARED ? walk(SHARED_CAPTURES).filter((f) => CAPTURE_FILE.test(f)).map((f) => relative(SHARED_CAPTURES, f)) : [];
}

/**
 * Every capture under ../shared/captures/. Where the folder is absent, the public ones by name
 * (their files missing): tests over them must be skipped there, with skipUnless(HAVE_SHARED, NO_SHARED).
 */
export function sharedCaptures(): Capture[] {
  if (!HAVE_SHARED) return PUBLIC_CAPTURES.map((n) => ({ file: join(SHARED_CAPTURES, n), name: `../shared/captures/${n}`, ports: [DEFAULT_KAFKA_PORT], origin: 'public' }));
  const files = walk(SHARED_CAPTURES).filter((f) => CAPTURE_FILE.test(f));
  const manifests = new Map<string, Map<string, number[]>>();
  return files.map((file) => {
    // The manifest that lists a file sits in one of its parent folders and names it relative to itself.
    let ports: number[] | undefined;
    for (let dir = join(file, '..'); dir.startsWith(SHARED_CAPTURES) && ports === undefined; dir = join(dir, '..')) {
      const mf = join(dir, 'MANIFEST.md');
      if (!manifests.has(dir)) manifests.set(dir, existsSync(mf) ? manifestPorts(readFileSync(mf, 'utf8')) : new Map());
      ports = manifests.get(dir)!.get(relative(dir, file));
    }
    return { file, name: `../shared/captures/${relative(SHARED_CAPTURES, file)}`, ports: ports ?? [DEFAULT_KAFKA_PORT], origin: 'public' };
  });
}
