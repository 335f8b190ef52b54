/**
 * Differential against Wireshark's Kafka dissector: tshark (-T json -x) gives each Kafka PDU of the
 * fixtures with its bytes (kafka_raw) and its fields; the interpreter decodes the same bytes by the
 * schemas, and every field both know must agree, value by value in tree order. PDUs tshark flags
 * (unknown key or version, a dissection that does not end at the PDU's length, malformed) are skipped:
 * tshark 4.0 knows older versions only (see test/real/differential.ts). Skipped without tshark.
 */
import { execFileSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NO_TSHARK, skipUnless } from '../helpers.js';
import { decodeRequest, type Struct, type Value } from '../../src/kafka/schema/interpreter.js';
import { builtinSchemas } from '../../src/kafka/schema/registry.js';
import type { RecordsSummary } from '../../src/kafka/schema/records.js';

let tshark = true;
try {
  execFileSync('tshark', ['--version'], { stdio: 'ignore' });
} catch {
  tshark = false;
}

const FIXTURES: [string, number[]][] = [
  ['kafkajs-mock-group.pcap', [35121, 39191, 43003]],
  ['kcat-mock-consumer-group.pcapng', [34795, 35261, 42175]],
  ['kcat-mock-produce.pcap', [37237, 37879, 44615]],
  ['kcat-mock-nano.pcap', [33209, 34689, 38085]],
  ['ckjs-mock-telemetry.pcap', [35717, 40797, 41351]],
];

const CODECS = ['none', 'gzip', 'snappy', 'lz4', 'zstd'];
type Get = (body: Struct) => string[];

/** The values at a dotted path, through arrays, in order, as tshark writes them. */
function at(path: string, show: (v: Value) => string = text): Get {
  return (body) => {
    let level: Value[] = [body as Value];
    for (const part of path.split('.')) {
      const next: Value[] = [];
      for (const v of level) {
        if (v === null || v === undefined || typeof v !== 'object') continue;
        const x = (v as Struct)[part] as Value | undefined;
        if (x === undefined) continue;
        if (Array.isArray(x)) next.push(...x);
        else next.push(x);
      }
      level = next;
    }
    return level.map(show);
  };
}

function text(v: Value): string {
  return v === null ? '[ Null ]' : String(v);
}

const batches = (path: string, show: (b: RecordsSummary['batches'][number]) => string): Get => (body) =>
  at(path, (v) => JSON.stringify((v as RecordsSummary).batches.map(show)))(body).flatMap((s) => JSON.parse(s) as string[]);

const both = (...gets: Get[]): Get => (body) => gets.flatMap((g) => g(body));

/** tshark field -> the schema's values, per API key (requests). */
const FIELDS: Record<number, Record<string, Get>> = {
  0: {
    'kafka.transactional_id': at('TransactionalId'),
    'kafka.required_acks': at('Acks'),
    'kafka.timeout': at('TimeoutMs'),
    'kafka.topic_name': at('TopicData.Name'),
    'kafka.partition_id': at('TopicData.PartitionData.Index'),
    'kafka.message_magic': batches('TopicData.PartitionData.Records', (b) => String(b.magic)),
    'kafka.batch_crc': batches('TopicData.PartitionData.Records', (b) => `0x${b.crc.toString(16).padStart(8, '0')}`),
    'kafka.batch_codec': batches('TopicData.PartitionData.Records', (b) => String(CODECS.indexOf(b.compression))),
    'kafka.batch_transactional': batches('TopicData.PartitionData.Records', (b) => (b.transactional ? '1' : '0')),
    'kafka.batch_last_offset_delta': batches('TopicData.PartitionData.Records', (b) => String(b.lastOffsetDelta)),
    'kafka.producer_id': batches('TopicData.PartitionData.Records', (b) => String(b.producerId)),
    'kafka.producer_epoch': batches('TopicData.PartitionData.Records', (b) => String(b.producerEpoch)),
  },
  1: {
    'kafka.replica_id': at('ReplicaId'),
    'kafka.max_wait_time': at('MaxWaitMs'),
    'kafka.min_bytes': at('MinBytes'),
    'kafka.max_bytes': both(at('MaxBytes'), at('Topics.Partitions.PartitionMaxBytes')),
    'kafka.isolation_level': at('IsolationLevel'),
    'kafka.fetch_session_id': at('SessionId'),
    'kafka.fetch_session_epoch': at('SessionEpoch'),
    'kafka.topic_name': both(at('Topics.Topic'), at('ForgottenTopicsData.Topic')),
    'kafka.partition_id': both(at('Topics.Partitions.Partition'), at('ForgottenTopicsData.Partitions')),
    'kafka.leader_epoch': at('Topics.Partitions.CurrentLeaderEpoch'),
    'kafka.offset': at('Topics.Partitions.FetchOffset'),
    'kafka.log_start_offset': at('Topics.Partitions.LogStartOffset'),
    'kafka.rack': at('RackId'),
  },
  2: {
    'kafka.replica_id': at('ReplicaId'),
    'kafka.isolation_level': at('IsolationLevel'),
    'kafka.topic_name': at('Topics.Name'),
    'kafka.partition_id': at('Topics.Partitions.PartitionIndex'),
    'kafka.offset_time': at('Topics.Partitions.Timestamp'),
  },
  3: { 'kafka.topic_name': at('Topics.Name') },
  8: {
    'kafka.consumer_group': at('GroupId'),
    'kafka.generation_id': at('GenerationIdOrMemberEpoch'),
    'kafka.member_id': at('MemberId'),
    'kafka.topic_name': at('Topics.Name'),
    'kafka.partition_id': at('Topics.Partitions.PartitionIndex'),
    'kafka.offset': at('Topics.Partitions.CommittedOffset'),
    'kafka.metadata': at('Topics.Partitions.CommittedMetadata'),
  },
  9: { 'kafka.consumer_group': at('GroupId'), 'kafka.topic_name': at('Topics.Name'), 'kafka.partition_id': at('Topics.PartitionIndexes') },
  10: { 'kafka.coordinator_key': at('Key'), 'kafka.coordinator_type': at('KeyType') },
  12: { 'kafka.consumer_group': at('GroupId'), 'kafka.generation_id': at('GenerationId'), 'kafka.member_id': at('MemberId'), 'kafka.consumer_group_instance': at('GroupInstanceId') },
  13: { 'kafka.consumer_group': at('GroupId'), 'kafka.member_id': both(at('MemberId'), at('Members.MemberId')) },
};
const HEADER: Record<string, Get> = {
  'kafka.api_key': at('RequestApiKey'),
  'kafka.api_version': at('RequestApiVersion'),
  'kafka.correlation_id': at('CorrelationId'),
  'kafka.client_id': at('ClientId'),
};

type Json = { [k: string]: unknown };

/** Every value of `field` in a PDU's tree, depth first in tshark's order. */
function collect(o: unknown, field: string, out: string[] = []): string[] {
  if (Array.isArray(o)) for (const x of o) collect(x, field, out);
  else if (o !== null && typeof o === 'object') {
    for (const [k, v] of Object.entries(o as Json)) {
      if (k === field) (Array.isArray(v) ? v.flat(9) : [v]).forEach((x) => out.push(String(x)));
      else if (typeof v === 'object') collect(v, field, out);
    }
  }
  return out;
}

const FLAGS = ['kafka.unknown_api_key', 'kafka.unsupported_api_version', 'kafka.pdu_length_mismatch', '_ws.malformed', '_ws.expert'];
const flagged = (pdu: unknown): boolean => FLAGS.some((f) => JSON.stringify(pdu).includes(`"${f}`));

describe('the interpreter agrees with tshark on the fixtures\' requests', skipUnless(tshark, NO_TSHARK), () => {
  const s = builtinSchemas();
  for (const [file, ports] of FIXTURES) {
    it(file, () => {
      const out = execFileSync(
        'tshark',
        ['-n', '-r', join(resolve(__dirname, '../../fixtures'), file), ...ports.flatMap((p) => ['-d', `tcp.port==${p},kafka`]), '-Y', 'kafka', '-T', 'json', '--no-duplicate-keys', '-x', '-J', 'frame tcp kafka'],
        { maxBuffer: 1 << 28, stdio: ['ignore', 'pipe', 'ignore'], env: { ...process.env, LC_ALL: 'C' } },
      ).toString();
      const packets = JSON.parse(out) as { _source: { layers: Json } }[];
      let compared = 0;
      let values = 0;
      for (const p of packets) {
        const layers = p._source.layers;
        const tcp = ([] as Json[]).concat(layers['tcp'] as Json).at(-1)!;
        if (!ports.includes(Number(tcp['tcp.dstport']))) continue;
        const pdus = ([] as Json[]).concat(layers['kafka'] as Json);
        const raws = ([] as unknown[][]).concat(Array.isArray((layers['kafka_raw'] as unknown[])[0]) ? (layers['kafka_raw'] as unknown[][]) : [layers['kafka_raw'] as unknown[]]);
        pdus.forEach((pdu, i) => {
          const fields = FIELDS[Number(pdu['kafka.api_key'])];
          if (!fields || flagged(pdu) || !raws[i]) return;
          const bytes = Uint8Array.from(Buffer.from(String(raws[i]![0]), 'hex'));
          const d = decodeRequest(s, bytes, 4, bytes.length, { records: 'summary' });
          expect(d.body?.complete).toBe(true);
          for (const [field, get] of Object.entries({ ...HEADER, ...fields })) {
            const theirs = collect(pdu, field);
            const ours = get(field in HEADER ? d.header!.value : d.body!.value);
            const frame = (layers['frame'] as Json)['frame.number'];
            expect({ frame, field, values: ours }).toEqual({ frame, field, values: theirs });
            values += theirs.length;
          }
          compared++;
        });
      }
      console.log(`${file}: ${compared} requests, ${values} values agree with tshark`);
      expect(compared).toBeGreaterThanOrEqual(3);
      expect(values).toBeGreaterThan(10);
    });
  }
});
