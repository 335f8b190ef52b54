/**
 * Client instances: connections grouped by who they belong to.
 *
 *  - A connection that sent a header ClientInstanceId (KIP-1313 tag 0) belongs to its first one;
 *    its v1-header requests belong to it too (the broker's connection context).
 *  - A legacy connection (no tag 0) belongs to its KIP-714 telemetry ID when the capture shows one
 *    (assigned by the broker, or sent by the client in a v0 telemetry body); an ID that some other
 *    connection sends in its headers is the same instance.
 *  - Otherwise, connections are grouped per client IP address and ClientId.
 */
import { parseUuid, uuidToHex } from '../kafka/uuid.js';
import { addDistinct } from './connection-state.js';
import type { ConnectionSummary, SoftwareId } from './types.js';

export type InstanceSource = 'header' | 'telemetry' | 'none';

export interface InstanceModel {
  /** Kafka's base64 form, or null for instances known only by address and ClientId. */
  clientInstanceId: string | null;
  clientInstanceIdHex: string | null;
  source: InstanceSource;
  /** Connections in input, then frame order. */
  connections: ConnectionSummary[];
  clientIds: string[];
  software: SoftwareId[];
  clientAddresses: string[];
  brokers: string[];
  requests: number;
  responses: number;
  errorResponses: number;
  /** apiKey → count, ascending by key. */
  apis: Map<number, number>;
  firstUs: number;
  lastUs: number;
}

function instanceKey(c: ConnectionSummary): { key: string; id: string | null; source: InstanceSource } {
  const header = c.headerInstanceIds[0];
  if (header !== undefined) return { key: `id:${header}`, id: header, source: 'header' };
  if (c.telemetryInstanceId !== null) return { key: `id:${c.telemetryInstanceId}`, id: c.telemetryInstanceId, source: 'telemetry' };
  // NUL cannot occur in an IP address, so the key is unambiguous whatever the ClientId holds.
  return { key: `addr:${c.clientIp}\u0000${c.clientIds[0] ?? ''}`, id: null, source: 'none' };
}

/** Groups connections (already in input and frame order) into instances, in order of first appearance. */
export function groupInstances(connections: readonly ConnectionSummary[]): InstanceModel[] {
  const byKey = new Map<string, InstanceModel>();
  for (const c of connections) {
    const { key, id, source } = instanceKey(c);
    let inst = byKey.get(key);
    if (inst === undefined) {
      const uuid = id === null ? null : parseUuid(id);
      inst = {
        clientInstanceId: id,
        clientInstanceIdHex: uuid === null ? null : uuidToHex(uuid),
        source,
        connections: [],
        clientIds: [],
        software: [],
        clientAddresses: [],
        brokers: [],
        requests: 0,
        responses: 0,
        errorResponses: 0,
        apis: new Map(),
        firstUs: c.firstUs,
        lastUs: c.lastUs,
      };
      byKey.set(key, inst);
    } else if (source === 'header' && inst.source === 'telemetry') {
      // The telemetry ID of a legacy connection is also some connection's header ID: one instance.
      inst.source = 'header';
    }
    inst.connections.push(c);
    for (const id of c.clientIds) addDistinct(inst.clientIds, id);
    for (const s of c.software) addDistinct(inst.software, s, (a, b) => a.name === b.name && a.version === b.version);
    addDistinct(inst.clientAddresses, c.clientIp);
    addDistinct(inst.brokers, c.broker);
    inst.requests += c.requests;
    inst.responses += c.responses;
    inst.errorResponses += c.errorResponses;
    for (const [key, n] of c.apis) inst.apis.set(key, (inst.apis.get(key) ?? 0) + n);
    inst.firstUs = Math.min(inst.firstUs, c.firstUs);
    inst.lastUs = Math.max(inst.lastUs, c.lastUs);
  }
  const instances = [...byKey.values()];
  for (const inst of instances) inst.apis = new Map([...inst.apis].sort((a, b) => a[0] - b[0]));
  return instances;
}
