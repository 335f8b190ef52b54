/**
 * Client instances: connections grouped by who they belong to.
 *
 *  - A connection that sent a header ClientInstanceId (KIP-1313 tag 0) belongs to its first one;
 *    its v1-header requests belong to it too (the broker's connection context).
 *  - A legacy connection (no tag 0) belongs to its KIP-714 telemetry ID when the capture shows one
 *    (assigned by the broker, or sent by the client in a v0 telemetry body); an ID that some other
 *    connection sends in its headers is the same instance.
 *  - Otherwise, connections are grouped per client IP address and ClientId.
 *  - The zero UUID is nobody's ID (KIP-1313: a client never uses it; zero-client-instance-id reports
 *    every request that sends it): connections sending it are grouped per client IP address and
 *    ClientId too, so unrelated clients that all send zero are not one instance.
 */
import { parseUuid, uuidToBase64, uuidToHex, ZERO_UUID } from '../kafka/uuid.js';
import { addDistinct, sameSoftware } from './distinct.js';
import { connectionOwner } from './owner.js';
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
  /** Non-zero error codes in those responses, every one counted. */
  errors: number;
  /** apiKey → count, ascending by key. */
  apis: Map<number, number>;
  firstUs: number;
  lastUs: number;
}

/** The zero UUID in Kafka's text form, "AAAAAAAAAAAAAAAAAAAAAA". */
export const ZERO_ID = uuidToBase64(ZERO_UUID);

/**
 * Instances by header or telemetry ID (the ID text itself is the key: its hash is kept with the
 * string), and ID-less ones by client IP, then first ClientId.
 */
class InstanceIndex {
  private readonly byId = new Map<string, InstanceModel>();
  private readonly byAddress = new Map<string, Map<string, InstanceModel>>();
  /** Connections whose header ID is the zero UUID, by address and ClientId too (see groupInstances). */
  private readonly zeroByAddress = new Map<string, Map<string, InstanceModel>>();

  get(id: string | null, c: ConnectionSummary): InstanceModel | undefined {
    if (id !== null && id !== ZERO_ID) return this.byId.get(id);
    return (id === null ? this.byAddress : this.zeroByAddress).get(c.clientIp)?.get(c.clientIds[0] ?? '');
  }

  set(id: string | null, c: ConnectionSummary, inst: InstanceModel): void {
    if (id !== null && id !== ZERO_ID) {
      this.byId.set(id, inst);
      return;
    }
    const index = id === null ? this.byAddress : this.zeroByAddress;
    let byClientId = index.get(c.clientIp);
    if (byClientId === undefined) index.set(c.clientIp, (byClientId = new Map()));
    byClientId.set(c.clientIds[0] ?? '', inst);
  }
}

/** Groups connections (already in input and frame order) into instances, in order of first appearance. */
export function groupInstances(connections: readonly ConnectionSummary[]): InstanceModel[] {
  const index = new InstanceIndex();
  const instances: InstanceModel[] = [];
  for (const c of connections) {
    const { id, source } = connectionOwner(c.headerInstanceIds, c.telemetryInstanceId);
    let inst = index.get(id, c);
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
        errors: 0,
        apis: new Map(),
        firstUs: c.firstUs,
        lastUs: c.lastUs,
      };
      index.set(id, c, inst);
      instances.push(inst);
    } else if (source === 'header' && inst.source === 'telemetry') {
      // The telemetry ID of a legacy connection is also some connection's header ID: one instance.
      inst.source = 'header';
    }
    inst.connections.push(c);
    for (const id of c.clientIds) addDistinct(inst.clientIds, id);
    for (const s of c.software) addDistinct(inst.software, s, sameSoftware);
    addDistinct(inst.clientAddresses, c.clientIp);
    addDistinct(inst.brokers, c.broker);
    inst.requests += c.requests;
    inst.responses += c.responses;
    inst.errorResponses += c.errorResponses;
    // A summary written before kcid counted every error code has no `errors`: its error responses then.
    inst.errors += c.errors ?? c.errorResponses;
    const apis = c.apis;
    for (let i = 0; i < apis.length; i++) {
      const pair = apis[i]!;
      inst.apis.set(pair[0], (inst.apis.get(pair[0]) ?? 0) + pair[1]);
    }
    inst.firstUs = Math.min(inst.firstUs, c.firstUs);
    inst.lastUs = Math.max(inst.lastUs, c.lastUs);
  }
  for (const inst of instances) inst.apis = new Map([...inst.apis].sort((a, b) => a[0] - b[0]));
  return instances;
}
