/**
 * A short line about a decoded request for `kcid requests --bodies` in table form: the topics and
 * partitions it names (Produce, Fetch, ListOffsets, ...), its group and member (the group APIs), and
 * the errors of its response by name. Found from the schemas' own markings (entityType topicName and
 * groupId, TopicId, MemberId, partition index fields), so it works for every API the same way.
 */
import { protocol, type Protocol } from './protocol.js';
import { inRange, layoutFor, type FieldSchema } from './schema/model.js';
import type { Struct, Value } from './schema/interpreter.js';
import { isZeroUuid, uuidToBase64 } from './uuid.js';

/** Topics listed at most; the rest are counted. */
const MAX_TOPICS = 8;
/** Partitions listed per topic at most. */
const MAX_PARTITIONS = 16;

const PARTITION_FIELDS = new Set(['Partition', 'PartitionIndex', 'Index', 'PartitionId']);

function fieldsOf(fields: readonly FieldSchema[], version: number): FieldSchema[] {
  return fields.filter((f) => inRange(f.versions, version));
}

/**
 * A topic's name wherever its struct holds it, else its TopicId. Metadata v10+ and others carry both,
 * TopicId first, and the zero UUID is Kafka's "no ID" (Uuid.ZERO_UUID): it never names a topic.
 */
function topicOf(fields: readonly FieldSchema[], s: Struct): string | null {
  let id: string | null = null;
  for (const f of fields) {
    const v = s[f.name];
    if (f.entityType === 'topicName' && typeof v === 'string') return v;
    if (f.name === 'TopicId' && v instanceof Uint8Array && id === null && !isZeroUuid(v)) id = uuidToBase64(v);
  }
  return id;
}

function partitionsOf(fields: readonly FieldSchema[], s: Struct, version: number): number[] {
  const out: number[] = [];
  for (const f of fields) {
    const v = s[f.name];
    if (!Array.isArray(v)) continue;
    if (f.struct !== null) {
      const inner = fieldsOf(f.struct.fields, version).find((g) => PARTITION_FIELDS.has(g.name) && g.primitive === 'int32' && !g.isArray);
      if (inner === undefined) continue;
      for (const e of v) {
        const n = (e as Struct)[inner.name];
        if (typeof n === 'number') out.push(n);
      }
    } else if (f.primitive === 'int32' && f.name === 'Partitions') {
      for (const n of v) if (typeof n === 'number') out.push(n);
    }
  }
  return out;
}

/** "orders[0,1,2] payments[5]", "group=g member=m". */
export function requestSummary(apiKey: number, version: number, body: Struct | null, p: Protocol = protocol()): string {
  const api = p.api(apiKey);
  if (api === undefined || body === null) return '';
  const layout = layoutFor(api.request, version);
  if (layout === null) return '';
  const top = fieldsOf(layout.fields, version);
  const parts: string[] = [];
  for (const f of top) {
    const v = body[f.name];
    if (typeof v !== 'string') continue;
    if (f.entityType === 'groupId') parts.push(`group=${v}`);
    else if (f.name === 'MemberId' && v !== '') parts.push(`member=${v}`);
  }
  let topics = 0;
  for (const f of top) {
    const v = body[f.name] as Value | undefined;
    if (!Array.isArray(v) || f.struct === null) continue;
    const fields = fieldsOf(f.struct.fields, version);
    for (const e of v) {
      const s = e as Struct;
      const topic = topicOf(fields, s);
      if (topic === null) continue;
      topics++;
      if (topics > MAX_TOPICS) continue;
      const ps = partitionsOf(fields, s, version);
      const shown = ps.slice(0, MAX_PARTITIONS).join(',') + (ps.length > MAX_PARTITIONS ? `,+${ps.length - MAX_PARTITIONS}` : '');
      parts.push(ps.length === 0 ? topic : `${topic}[${shown}]`);
    }
  }
  if (topics > MAX_TOPICS) parts.push(`+${topics - MAX_TOPICS} topics`);
  return parts.join(' ');
}

/** "NOT_LEADER_OR_FOLLOWER (6) x3, UNKNOWN_TOPIC_ID (100)": the non-zero error codes of a response. */
export function errorSummary(codes: readonly number[], p: Protocol = protocol()): string {
  const counts = new Map<number, number>();
  for (const c of codes) if (c !== 0) counts.set(c, (counts.get(c) ?? 0) + 1);
  return [...counts].map(([c, n]) => `${p.errorLabel(c)}${n > 1 ? ` x${n}` : ''}`).join(', ');
}
