/**
 * kcid's body decoding against Wireshark's Kafka dissector (TShark 4.0 here): for every request tshark
 * dissects without flagging it (unknown key, unsupported version, malformed), the topic names and the
 * consumer groups of its body, and the error codes of its response, frame by frame, must be the same.
 * Runs on the recorded fixtures and, when present, the public captures in ../shared/captures.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { fixtureCaptures, HAVE_SHARED, sharedCaptures, type Capture } from './real/captures.js';
import { NO_SHARED, NO_TSHARK, skipUnless } from './helpers.js';
import { join } from 'node:path';
import { decodeAsArgs, REPO, tsharkRequests } from './real/differential.js';
import { protocol } from '../src/kafka/protocol.js';
import { inRange, layoutFor, type FieldSchema } from '../src/kafka/schema/model.js';

const run = promisify(execFile);
const KCID = process.env['KCID_BIN'] ?? join(REPO, 'bin', 'kcid');
const HAVE_TSHARK = await run('tshark', ['-v']).then(
  () => true,
  () => false,
);

interface Fields {
  topics: string[];
  groups: string[];
  errors: number[];
}

/** tshark's topic names, consumer groups and error codes per frame (every occurrence, in wire order). */
async function tsharkFields(c: Capture): Promise<Map<number, Fields>> {
  const args = ['-n', '-r', c.file, ...decodeAsArgs(c.ports), '-Y', 'kafka', '-T', 'fields', '-E', 'occurrence=a', '-E', 'aggregator=|'];
  for (const f of ['frame.number', 'kafka.topic_name', 'kafka.consumer_group', 'kafka.error']) args.push('-e', f);
  const { stdout } = await run('tshark', args, { maxBuffer: 1 << 28, env: { ...process.env, LC_ALL: 'C' } });
  const out = new Map<number, Fields>();
  for (const line of stdout.split('\n')) {
    if (line === '') continue;
    const [frame, topics, groups, errors] = line.split('\t');
    const list = (s: string | undefined) => (s === undefined || s === '' ? [] : s.split('|'));
    out.set(Number(frame), { topics: list(topics), groups: list(groups), errors: list(errors).map(Number) });
  }
  return out;
}

/** The same from a decoded body written as Kafka's JSON converters write it, walked with its schema. */
function kcidFields(kind: 'request' | 'response', apiKey: number, version: number, json: unknown, into: Fields): void {
  const api = protocol().api(apiKey);
  const layout = api === undefined ? null : layoutFor(kind === 'request' ? api.request : api.response, version);
  if (layout === null || json === null) return;
  const walk = (fields: readonly FieldSchema[], o: Record<string, unknown>): void => {
    for (const f of fields) {
      if (!inRange(f.versions, version)) continue;
      const v = o[f.jsonName];
      if (v === undefined || v === null) continue;
      if (f.entityType === 'topicName' && typeof v === 'string') into.topics.push(v);
      if (f.entityType === 'groupId' && typeof v === 'string') into.groups.push(v);
      if (f.name === 'ErrorCode' && typeof v === 'number') into.errors.push(v);
      if (f.struct !== null) for (const e of f.isArray ? (v as Record<string, unknown>[]) : [v as Record<string, unknown>]) walk(f.struct.fields, e);
    }
  };
  walk(layout.fields, json as Record<string, unknown>);
}

describe('kcid --bodies agrees with tshark on topics, groups and error codes', skipUnless(HAVE_TSHARK, NO_TSHARK), () => {
  const agrees = async (_name: string, c: Capture): Promise<void> => {
    const [theirs, requests] = await Promise.all([tsharkFields(c), tsharkRequests(c.file, c.ports)]);
    const { stdout } = await run(process.execPath, [KCID, 'requests', c.file, '--bodies', '--format', 'ndjson', '-q', '-p', c.ports.join(',')], {
      maxBuffer: 1 << 28,
      env: { ...process.env, NO_COLOR: '1' },
    });
    // Frames tshark dissects in full: a flagged request (or one in a malformed frame), and its response, are left out.
    const flagged = new Set(requests.filter((r) => r.flag !== null || r.malformed).map((r) => r.frame));
    const flaggedResponses = new Set(requests.filter((r) => r.flag !== null || r.malformed).map((r) => r.responseFrame));
    let compared = 0;
    const differences: string[] = [];
    type Row = { frame: number; responseFrame: number | null; apiKey: number; apiVersion: number; apiName: string; request: unknown; response: unknown; truncated: string[]; requestCaptured: boolean };
    const rows = stdout.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Row);
    // One frame may carry several PDUs (tshark's fields of a frame are all of them): compare frames that hold one.
    const perFrame = new Map<number, number>();
    for (const r of rows) for (const f of [r.frame, r.responseFrame]) if (f !== null) perFrame.set(f, (perFrame.get(f) ?? 0) + 1);
    for (const row of rows) {
      // A response whose request the capture missed has no bodies to compare.
      if (!row.requestCaptured || flagged.has(row.frame) || row.truncated.length > 0 || perFrame.get(row.frame) !== 1) continue;
      const t = theirs.get(row.frame);
      if (t === undefined) continue;
      const mine: Fields = { topics: [], groups: [], errors: [] };
      kcidFields('request', row.apiKey, row.apiVersion, row.request, mine);
      if (row.request !== null) {
        compared++;
        if (JSON.stringify([mine.topics, mine.groups]) !== JSON.stringify([t.topics, t.groups])) {
          differences.push(`frame ${row.frame} ${row.apiName} v${row.apiVersion}: kcid ${JSON.stringify([mine.topics, mine.groups])}, tshark ${JSON.stringify([t.topics, t.groups])}`);
        }
      }
      if (row.responseFrame !== null && row.response !== null && !flaggedResponses.has(row.responseFrame) && perFrame.get(row.responseFrame) === 1) {
        const tr = theirs.get(row.responseFrame);
        const mr: Fields = { topics: [], groups: [], errors: [] };
        kcidFields('response', row.apiKey, row.apiVersion, row.response, mr);
        if (tr !== undefined && tr.errors.length > 0) {
          compared++;
          if (JSON.stringify(mr.errors) !== JSON.stringify(tr.errors)) {
            differences.push(`frame ${row.responseFrame} ${row.apiName} v${row.apiVersion} response: kcid errors ${JSON.stringify(mr.errors)}, tshark ${JSON.stringify(tr.errors)}`);
          }
        }
      }
    }
    console.log(`${c.name}: ${compared} bodies compared, ${differences.length} differences`);
    expect(differences).toEqual([]);
  };
  it.each(fixtureCaptures().map((c) => [c.name, c] as const))('%s', agrees);
  it.each(sharedCaptures().map((c) => [c.name, c] as const))('%s', skipUnless(HAVE_SHARED, NO_SHARED), agrees);
});
