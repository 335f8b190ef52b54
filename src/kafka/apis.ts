/**
 * Every Kafka API kcid knows: valid and flexible versions, and where each response version keeps its
 * top-level ErrorCode. Written from Apache Kafka's message schemas (clients/src/main/resources/common/message,
 * the 3.9 generation: see test/kafka-apis.test.ts, which checks this table against them), plus KIP-1313.
 */

export interface VersionRange {
  min: number;
  /** Infinity for an open range ('3+'). */
  max: number;
}

export interface ApiInfo {
  key: number;
  /** The schema's name without 'Request', e.g. 'Produce'. */
  name: string;
  minVersion: number;
  maxVersion: number;
  /** First flexible version (KIP-482: compact strings, tagged fields, header v2/v1); null when none is. */
  firstFlexibleVersion: number | null;
  /**
   * Byte offset of the top-level ErrorCode (int16) in the response body, indexed by version; null where the
   * version has no top-level ErrorCode or a variable-size field (string, array, ...) comes before it.
   */
  errorCodeOffsets: readonly (number | null)[];
}

/** Parses a schema version range: '0+', '1-3', '2' or 'none' (null). Null for anything else too. */
export function parseVersionRange(text: string): VersionRange | null {
  let m: RegExpExecArray | null;
  if ((m = /^(\d+)\+$/.exec(text))) return { min: Number(m[1]), max: Infinity };
  if ((m = /^(\d+)-(\d+)$/.exec(text))) return { min: Number(m[1]), max: Number(m[2]) };
  if ((m = /^(\d+)$/.exec(text))) return { min: Number(m[1]), max: Number(m[1]) };
  return null;
}

type Row = readonly [key: number, name: string, validVersions: string, flexibleVersions: string, errorCodeAt: string];

/**
 * key, name, valid versions, flexible versions, response ErrorCode offset by version range
 * ('1-3:4' = versions 1 to 3 have it at byte 4; '' = no version has it at a fixed offset).
 *
 * KIP-1313 adds version 1 of GetTelemetrySubscriptions (71) and PushTelemetry (72), which drop the
 * ClientInstanceId from the request (and from the GetTelemetrySubscriptions response) now that the request
 * header carries it; neither response moves its ErrorCode.
 */
const ROWS: readonly Row[] = [
  [0,  'Produce',                      '0-11', '9+',   ''],
  [1,  'Fetch',                        '0-17', '12+',  '7+:4'],
  [2,  'ListOffsets',                  '0-10', '6+',   ''],
  [3,  'Metadata',                     '0-12', '9+',   ''],
  [4,  'LeaderAndIsr',                 '0-7',  '4+',   '0+:0'],
  [5,  'StopReplica',                  '0-4',  '2+',   '0+:0'],
  [6,  'UpdateMetadata',               '0-8',  '6+',   '0+:0'],
  [7,  'ControlledShutdown',           '0-3',  '3+',   '0+:0'],
  [8,  'OffsetCommit',                 '0-9',  '8+',   ''],
  [9,  'OffsetFetch',                  '0-9',  '6+',   ''],
  [10, 'FindCoordinator',              '0-6',  '3+',   '0:0 1-3:4'],
  [11, 'JoinGroup',                    '0-9',  '6+',   '0-1:0 2+:4'],
  [12, 'Heartbeat',                    '0-4',  '4+',   '0:0 1+:4'],
  [13, 'LeaveGroup',                   '0-5',  '4+',   '0:0 1+:4'],
  [14, 'SyncGroup',                    '0-5',  '4+',   '0:0 1+:4'],
  [15, 'DescribeGroups',               '0-5',  '5+',   ''],
  [16, 'ListGroups',                   '0-5',  '3+',   '0:0 1+:4'],
  [17, 'SaslHandshake',                '0-1',  'none', '0+:0'],
  [18, 'ApiVersions',                  '0-4',  '3+',   '0+:0'],
  [19, 'CreateTopics',                 '0-7',  '5+',   ''],
  [20, 'DeleteTopics',                 '0-6',  '4+',   ''],
  [21, 'DeleteRecords',                '0-2',  '2+',   ''],
  [22, 'InitProducerId',               '0-5',  '2+',   '0+:4'],
  [23, 'OffsetForLeaderEpoch',         '0-4',  '4+',   ''],
  [24, 'AddPartitionsToTxn',           '0-5',  '3+',   '4+:4'],
  [25, 'AddOffsetsToTxn',              '0-4',  '3+',   '0+:4'],
  [26, 'EndTxn',                       '0-5',  '3+',   '0+:4'],
  [27, 'WriteTxnMarkers',              '0-1',  '1+',   ''],
  [28, 'TxnOffsetCommit',              '0-4',  '3+',   ''],
  [29, 'DescribeAcls',                 '0-3',  '2+',   '0+:4'],
  [30, 'CreateAcls',                   '0-3',  '2+',   ''],
  [31, 'DeleteAcls',                   '0-3',  '2+',   ''],
  [32, 'DescribeConfigs',              '0-4',  '4+',   ''],
  [33, 'AlterConfigs',                 '0-2',  '2+',   ''],
  [34, 'AlterReplicaLogDirs',          '0-2',  '2+',   ''],
  [35, 'DescribeLogDirs',              '0-4',  '2+',   '3+:4'],
  [36, 'SaslAuthenticate',             '0-2',  '2+',   '0+:0'],
  [37, 'CreatePartitions',             '0-3',  '2+',   ''],
  [38, 'CreateDelegationToken',        '0-3',  '2+',   '0+:0'],
  [39, 'RenewDelegationToken',         '0-2',  '2+',   '0+:0'],
  [40, 'ExpireDelegationToken',        '0-2',  '2+',   '0+:0'],
  [41, 'DescribeDelegationToken',      '0-3',  '2+',   '0+:0'],
  [42, 'DeleteGroups',                 '0-2',  '2+',   ''],
  [43, 'ElectLeaders',                 '0-2',  '2+',   '1+:4'],
  [44, 'IncrementalAlterConfigs',      '0-1',  '1+',   ''],
  [45, 'AlterPartitionReassignments',  '0',    '0+',   '0+:4'],
  [46, 'ListPartitionReassignments',   '0',    '0+',   '0+:4'],
  [47, 'OffsetDelete',                 '0',    'none', '0+:0'],
  [48, 'DescribeClientQuotas',         '0-1',  '1+',   '0+:4'],
  [49, 'AlterClientQuotas',            '0-1',  '1+',   ''],
  [50, 'DescribeUserScramCredentials', '0',    '0+',   '0+:4'],
  [51, 'AlterUserScramCredentials',    '0',    '0+',   ''],
  [52, 'Vote',                         '0-1',  '0+',   '0+:0'],
  [53, 'BeginQuorumEpoch',             '0-1',  '1+',   '0+:0'],
  [54, 'EndQuorumEpoch',               '0-1',  '1+',   '0+:0'],
  [55, 'DescribeQuorum',               '0-2',  '0+',   '0+:0'],
  [56, 'AlterPartition',               '0-3',  '0+',   '0+:4'],
  [57, 'UpdateFeatures',               '0-2',  '0+',   '0+:4'],
  [58, 'Envelope',                     '0',    '0+',   ''],
  [59, 'FetchSnapshot',                '0-1',  '0+',   '0+:4'],
  [60, 'DescribeCluster',              '0-1',  '0+',   '0+:4'],
  [61, 'DescribeProducers',            '0',    '0+',   ''],
  [62, 'BrokerRegistration',           '0-4',  '0+',   '0+:4'],
  [63, 'BrokerHeartbeat',              '0-1',  '0+',   '0+:4'],
  [64, 'UnregisterBroker',             '0',    '0+',   '0+:4'],
  [65, 'DescribeTransactions',         '0',    '0+',   ''],
  [66, 'ListTransactions',             '0-1',  '0+',   '0+:4'],
  [67, 'AllocateProducerIds',          '0',    '0+',   '0+:4'],
  [68, 'ConsumerGroupHeartbeat',       '0-1',  '0+',   '0+:4'],
  [69, 'ConsumerGroupDescribe',        '0',    '0+',   ''],
  [70, 'ControllerRegistration',       '0',    '0+',   '0+:4'],
  [71, 'GetTelemetrySubscriptions',    '0-1',  '0+',   '0+:4'],
  [72, 'PushTelemetry',                '0-1',  '0+',   '0+:4'],
  [73, 'AssignReplicasToDirs',         '0',    '0+',   '0+:4'],
  [74, 'ListClientMetricsResources',   '0',    '0+',   '0+:4'],
  [75, 'DescribeTopicPartitions',      '0',    '0+',   ''],
  [76, 'ShareGroupHeartbeat',          '0',    '0+',   '0+:4'],
  [77, 'ShareGroupDescribe',           '0',    '0+',   ''],
  [78, 'ShareFetch',                   '0',    '0+',   '0+:4'],
  [79, 'ShareAcknowledge',             '0',    '0+',   '0+:4'],
  [80, 'AddRaftVoter',                 '0',    '0+',   '0+:4'],
  [81, 'RemoveRaftVoter',              '0',    '0+',   '0+:4'],
  [82, 'UpdateRaftVoter',              '0',    '0+',   '0+:4'],
  [83, 'InitializeShareGroupState',    '0',    '0+',   ''],
  [84, 'ReadShareGroupState',          '0',    '0+',   ''],
  [85, 'WriteShareGroupState',         '0',    '0+',   ''],
  [86, 'DeleteShareGroupState',        '0',    '0+',   ''],
  [87, 'ReadShareGroupStateSummary',   '0',    '0+',   ''],
];

function toApiInfo([key, name, validVersions, flexibleVersions, errorCodeAt]: Row): ApiInfo {
  const valid = parseVersionRange(validVersions)!;
  const flexible = parseVersionRange(flexibleVersions);
  const errorCodeOffsets: (number | null)[] = [];
  for (let v = 0; v <= valid.max; v++) errorCodeOffsets.push(null);
  for (const segment of errorCodeAt.split(' ').filter(Boolean)) {
    const [versions, offset] = segment.split(':') as [string, string];
    const range = parseVersionRange(versions)!;
    for (let v = range.min; v <= Math.min(range.max, valid.max); v++) errorCodeOffsets[v] = Number(offset);
  }
  return {
    key,
    name,
    minVersion: valid.min,
    maxVersion: valid.max,
    firstFlexibleVersion: flexible === null ? null : flexible.min,
    errorCodeOffsets,
  };
}

/** Indexed by API key (the keys are dense from 0). */
const BY_KEY: readonly ApiInfo[] = ROWS.map(toApiInfo);

/** All known APIs, by ascending key. */
export const ALL_APIS: readonly ApiInfo[] = BY_KEY;

export function apiInfo(key: number): ApiInfo | undefined {
  return Number.isInteger(key) && key >= 0 ? BY_KEY[key] : undefined;
}

/** 'Produce', 'Fetch', ... or 'Unknown(123)'. */
export function apiName(key: number): string {
  return apiInfo(key)?.name ?? `Unknown(${key})`;
}

export function isValidVersion(key: number, version: number): boolean {
  const api = apiInfo(key);
  return api !== undefined && Number.isInteger(version) && version >= api.minVersion && version <= api.maxVersion;
}

/** True for a valid flexible version of a known API; false otherwise (including unknown key or version). */
export function isFlexible(key: number, version: number): boolean {
  const api = apiInfo(key);
  return (
    api !== undefined &&
    api.firstFlexibleVersion !== null &&
    isValidVersion(key, version) &&
    version >= api.firstFlexibleVersion
  );
}

/** Offset of the top-level ErrorCode in this response's body, or null (unknown API/version, or not fixed). */
export function errorCodeOffset(key: number, version: number): number | null {
  if (!isValidVersion(key, version)) return null;
  return apiInfo(key)!.errorCodeOffsets[version] ?? null;
}
