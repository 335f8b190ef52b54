/**
 * Differential against a peer's encoders: kafkajs 2.2.4 (a devDependency) writes requests of many APIs
 * and versions with its own protocol code (node_modules/kafkajs/src/protocol/requests/<api>/v<n>/request.js);
 * kcid's interpreter must read every field back, by Kafka's schema names, and end exactly where kafkajs did.
 */
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { decodeBody } from '../../src/kafka/schema/interpreter.js';
import { builtinSchemas } from '../../src/kafka/schema/registry.js';

const require = createRequire(import.meta.url);
const s = builtinSchemas();

interface KafkajsRequest {
  apiKey: number;
  apiVersion: number;
  encode: () => Promise<{ buffer: Buffer }> | { buffer: Buffer };
}

function request(api: string, version: number, args: unknown): KafkajsRequest {
  return (require(`kafkajs/src/protocol/requests/${api}/v${version}/request.js`) as (a: unknown) => KafkajsRequest)(args);
}

/** The decoded value as plain JSON-able data (bigint as "123n", UUIDs as byte lists). */
const plain = (v: unknown): unknown => JSON.parse(JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? `${x}n` : x instanceof Uint8Array ? [...x] : x)));

async function decoded(api: string, version: number, args: unknown, options = {}): Promise<unknown> {
  const r = request(api, version, args);
  const bytes = new Uint8Array((await r.encode()).buffer);
  expect(r.apiVersion).toBe(version);
  const d = decodeBody(s, 'request', r.apiKey, version, bytes, 0, bytes.length, options)!;
  expect(d).not.toBe(null);
  expect([d.complete, d.end, d.trailing]).toEqual([true, bytes.length, 0]);
  return plain(d.value);
}

const range = (lo: number, hi: number) => Array.from({ length: hi - lo + 1 }, (_, i) => lo + i);
const when = (cond: boolean, o: object) => (cond ? o : {});

describe('kafkajs 2.2.4 requests, decoded by the schemas', () => {
  it('ApiVersions v0-2', async () => {
    for (const v of range(0, 2)) expect(await decoded('apiVersions', v, {})).toEqual({});
  });

  it('Metadata v0-6', async () => {
    for (const v of range(0, 6)) {
      expect(await decoded('metadata', v, { topics: ['orders', 'pay'], allowAutoTopicCreation: false })).toEqual({
        Topics: [{ Name: 'orders' }, { Name: 'pay' }],
        ...when(v >= 4, { AllowAutoTopicCreation: false }),
      });
    }
  });

  it('Fetch v0-11 (v0-3 removed in Kafka 4.0: the 2024 layout)', async () => {
    for (const v of range(0, 11)) {
      const args = {
        replicaId: -1,
        maxWaitTime: 500,
        minBytes: 1,
        maxBytes: 52428800,
        isolationLevel: 0,
        sessionId: 11,
        sessionEpoch: 2,
        rackId: 'rack-a',
        topics: [{ topic: 'orders', partitions: [{ partition: 3, fetchOffset: '9007199254740993', maxBytes: 1048576, currentLeaderEpoch: 5, logStartOffset: '7' }] }],
        forgottenTopics: [{ topic: 'old', partitions: [1, 2] }],
      };
      expect(await decoded('fetch', v, args)).toEqual({
        ReplicaId: -1,
        MaxWaitMs: 500,
        MinBytes: 1,
        ...when(v >= 3, { MaxBytes: 52428800 }),
        ...when(v >= 4, { IsolationLevel: 0 }),
        ...when(v >= 7, { SessionId: 11, SessionEpoch: 2 }),
        Topics: [
          {
            Topic: 'orders',
            Partitions: [
              {
                Partition: 3,
                ...when(v >= 9, { CurrentLeaderEpoch: 5 }),
                FetchOffset: '9007199254740993n',
                ...when(v >= 5, { LogStartOffset: '7n' }),
                PartitionMaxBytes: 1048576,
              },
            ],
          },
        ],
        ...when(v >= 7, { ForgottenTopicsData: [{ Topic: 'old', Partitions: [1, 2] }] }),
        ...when(v >= 11, { RackId: 'rack-a' }),
      });
    }
  });

  it('Produce v0-7 with kafkajs record batches, summarised (v0-2 removed in Kafka 4.0)', async () => {
    for (const v of range(0, 7)) {
      const args = {
        acks: -1,
        timeout: 30000,
        transactionalId: v >= 3 ? 'tx-1' : undefined,
        producerId: v >= 3 ? require('kafkajs/src/utils/long').fromNumber(4242) : undefined,
        producerEpoch: 1,
        topicData: [{ topic: 'orders', partitions: [{ partition: 0, messages: [{ key: 'k', value: 'v1' }, { key: 'k', value: 'v2' }] }] }],
      };
      const got = (await decoded('produce', v, args, { records: 'summary' })) as {
        TransactionalId?: string;
        Acks: number;
        TimeoutMs: number;
        TopicData: { Name: string; PartitionData: { Index: number; Records: { batches: { magic: number; recordCount: number; producerId: string | null; compression: string; transactional: boolean }[]; batchCount: number; recordCount: number; truncatedBytes: number } }[] }[];
      };
      expect([got.TransactionalId, got.Acks, got.TimeoutMs, got.TopicData[0]!.Name, got.TopicData[0]!.PartitionData[0]!.Index]).toEqual([v >= 3 ? 'tx-1' : undefined, -1, 30000, 'orders', 0]);
      const r = got.TopicData[0]!.PartitionData[0]!.Records;
      expect([r.truncatedBytes, r.recordCount]).toEqual([0, 2]);
      if (v >= 3) {
        expect(r.batchCount).toBe(1);
        const b = r.batches[0]!;
        expect([b.magic, b.recordCount, b.producerId, b.compression, b.transactional]).toEqual([2, 2, '4242n', 'none', true]);
      } else {
        // kafkajs writes magic 0 message sets for Produce v0 and v1, magic 1 for v2.
        expect([r.batchCount, ...r.batches.map((b) => b.magic)]).toEqual([2, v === 2 ? 1 : 0, v === 2 ? 1 : 0]);
      }
    }
  });

  it('group APIs: FindCoordinator 0-2, JoinGroup 0-5, SyncGroup 0-3, Heartbeat 0-3, LeaveGroup 0-3, DescribeGroups 0-2, ListGroups 0-2, DeleteGroups 0-1', async () => {
    for (const v of range(0, 2)) {
      expect(await decoded('findCoordinator', v, { groupId: 'g1', coordinatorKey: 'g1', coordinatorType: 1 })).toEqual({ Key: 'g1', ...when(v >= 1, { KeyType: 1 }) });
    }
    for (const v of range(0, 5)) {
      expect(
        await decoded('joinGroup', v, {
          groupId: 'g1',
          sessionTimeout: 10000,
          rebalanceTimeout: 60000,
          memberId: 'm-1',
          groupInstanceId: 'static-1',
          protocolType: 'consumer',
          groupProtocols: [{ name: 'range', metadata: Buffer.from([1, 2, 3]) }],
        }),
      ).toEqual({
        GroupId: 'g1',
        SessionTimeoutMs: 10000,
        ...when(v >= 1, { RebalanceTimeoutMs: 60000 }),
        MemberId: 'm-1',
        ...when(v >= 5, { GroupInstanceId: 'static-1' }),
        ProtocolType: 'consumer',
        Protocols: [{ Name: 'range', Metadata: { size: 3 } }],
      });
    }
    for (const v of range(0, 3)) {
      expect(
        await decoded('syncGroup', v, { groupId: 'g1', generationId: 4, memberId: 'm-1', groupInstanceId: 'static-1', groupAssignment: [{ memberId: 'm-1', memberAssignment: Buffer.alloc(9) }] }),
      ).toEqual({ GroupId: 'g1', GenerationId: 4, MemberId: 'm-1', ...when(v >= 3, { GroupInstanceId: 'static-1' }), Assignments: [{ MemberId: 'm-1', Assignment: { size: 9 } }] });
      expect(await decoded('heartbeat', v, { groupId: 'g1', groupGenerationId: 4, memberId: 'm-1', groupInstanceId: 'static-1' })).toEqual({
        GroupId: 'g1',
        GenerationId: 4,
        MemberId: 'm-1',
        ...when(v >= 3, { GroupInstanceId: 'static-1' }),
      });
      expect(await decoded('leaveGroup', v, { groupId: 'g1', memberId: 'm-1', members: [{ memberId: 'm-1', groupInstanceId: 'static-1' }] })).toEqual(
        v >= 3 ? { GroupId: 'g1', Members: [{ MemberId: 'm-1', GroupInstanceId: 'static-1' }] } : { GroupId: 'g1', MemberId: 'm-1' },
      );
    }
    for (const v of range(0, 2)) {
      expect(await decoded('describeGroups', v, { groupIds: ['g1', 'g2'] })).toEqual({ Groups: ['g1', 'g2'] });
      expect(await decoded('listGroups', v, {})).toEqual({});
    }
    for (const v of range(0, 1)) expect(await decoded('deleteGroups', v, ['g1', 'g2'])).toEqual({ GroupsNames: ['g1', 'g2'] });
  });

  it('offsets: OffsetCommit 0-5 (0-1 removed in 4.0), OffsetFetch 1-4, ListOffsets 0-3 (0 removed in 4.0)', async () => {
    for (const v of range(0, 5)) {
      expect(
        await decoded('offsetCommit', v, {
          groupId: 'g1',
          groupGenerationId: 4,
          memberId: 'm-1',
          retentionTime: -1,
          topics: [{ topic: 'orders', partitions: [{ partition: 2, offset: '120', timestamp: '1700000000000', metadata: 'md' }] }],
        }),
      ).toEqual({
        GroupId: 'g1',
        ...when(v >= 1, { GenerationIdOrMemberEpoch: 4, MemberId: 'm-1' }),
        ...when(v >= 2 && v <= 4, { RetentionTimeMs: '-1n' }),
        Topics: [{ Name: 'orders', Partitions: [{ PartitionIndex: 2, CommittedOffset: '120n', ...when(v === 1, { CommitTimestamp: '1700000000000n' }), CommittedMetadata: 'md' }] }],
      });
    }
    for (const v of range(1, 4)) {
      expect(await decoded('offsetFetch', v, { groupId: 'g1', topics: [{ topic: 'orders', partitions: [{ partition: 0 }, { partition: 5 }] }] })).toEqual({
        GroupId: 'g1',
        Topics: [{ Name: 'orders', PartitionIndexes: [0, 5] }],
      });
    }
    for (const v of range(0, 3)) {
      expect(await decoded('listOffsets', v, { replicaId: -1, isolationLevel: 1, topics: [{ topic: 'orders', partitions: [{ partition: 1, timestamp: -1 }] }] })).toEqual({
        ReplicaId: -1,
        ...when(v >= 2, { IsolationLevel: 1 }),
        Topics: [{ Name: 'orders', Partitions: [{ PartitionIndex: 1, Timestamp: '-1n', ...when(v === 0, { MaxNumOffsets: 1 }) }] }],
      });
    }
  });

  it('admin and transactions: CreateTopics 0-3, DeleteTopics 0-1, InitProducerId 0-1, EndTxn 0-1, AddOffsetsToTxn 0-1, SaslHandshake 0-1, SaslAuthenticate 0-1', async () => {
    for (const v of range(0, 3)) {
      expect(
        await decoded('createTopics', v, {
          topics: [{ topic: 'new', numPartitions: 3, replicationFactor: 2, replicaAssignment: [], configEntries: [{ name: 'cleanup.policy', value: 'compact' }] }],
          validateOnly: true,
          timeout: 5000,
        }),
      ).toEqual({
        Topics: [{ Name: 'new', NumPartitions: 3, ReplicationFactor: 2, Assignments: [], Configs: [{ Name: 'cleanup.policy', Value: 'compact' }] }],
        timeoutMs: 5000,
        ...when(v >= 1, { validateOnly: true }),
      });
    }
    for (const v of range(0, 1)) {
      expect(await decoded('deleteTopics', v, { topics: ['a', 'b'], timeout: 5000 })).toEqual({ TopicNames: ['a', 'b'], TimeoutMs: 5000 });
      expect(await decoded('initProducerId', v, { transactionalId: 'tx-1', transactionTimeout: 60000 })).toEqual({ TransactionalId: 'tx-1', TransactionTimeoutMs: 60000 });
      const pid = require('kafkajs/src/utils/long').fromString('9223372036854775807');
      expect(await decoded('endTxn', v, { transactionalId: 'tx-1', producerId: pid, producerEpoch: 3, transactionResult: true })).toEqual({
        TransactionalId: 'tx-1',
        ProducerId: '9223372036854775807n',
        ProducerEpoch: 3,
        Committed: true,
      });
      expect(await decoded('addOffsetsToTxn', v, { transactionalId: 'tx-1', producerId: pid, producerEpoch: 3, groupId: 'g1' })).toEqual({
        TransactionalId: 'tx-1',
        ProducerId: '9223372036854775807n',
        ProducerEpoch: 3,
        GroupId: 'g1',
      });
      expect(await decoded('saslHandshake', v, { mechanism: 'SCRAM-SHA-512' })).toEqual({ Mechanism: 'SCRAM-SHA-512' });
      // kafkajs's mechanisms hand SaslAuthenticate their token already length-prefixed (Encoder.writeBytes).
      const token = Buffer.from('n,,n=user,r=nonce');
      const prefixed = Buffer.concat([Buffer.from([0, 0, 0, token.length]), token]);
      expect(await decoded('saslAuthenticate', v, { authBytes: prefixed })).toEqual({ AuthBytes: { size: 17 } });
    }
  });
});
