import { ZERO_ID } from '../instances.js';
import type { ReportRule } from './rule.js';

export const instanceIdMultipleHosts: ReportRule = {
  kind: 'report',
  id: 'instance-id-multiple-hosts',
  severity: 'warning',
  revision: 'both',
  summary: 'One client instance ID is seen from two or more client IP addresses.',
  explanation:
    'A client instance ID identifies one instance of a client: one Producer, Consumer or Admin object in one ' +
    'process (KIP-1313). Seen from two hosts, the same ID usually means an ID baked into configuration or an ' +
    'image, or a generator that is not random, and the broker can no longer tell the instances apart. A ' +
    'client behind NAT or with several interfaces can legitimately show two addresses, hence a warning. ' +
    'Judged across every capture given, so one capture per broker is enough.',
  spec:
    'KIP-1313: "This KIP proposes adding a UUID called the client instance ID into the request header of all ' +
    'Kafka protocol requests ... a universal unique identifier for client instances in all RPCs."',
  check(instance, report) {
    // The zero UUID is not an identity: zero-client-instance-id reports it, request by request.
    if (instance.clientInstanceId === null || instance.clientInstanceId === ZERO_ID || instance.clientAddresses.length < 2) return;
    const second = instance.clientAddresses[1]!;
    const at = instance.connections.findIndex((c) => c.clientIp === second);
    report({
      connection: Math.max(at, 0),
      message: `client instance ID ${instance.clientInstanceId} is used from ${instance.clientAddresses.length} hosts: ${instance.clientAddresses.join(', ')}`,
    });
  },
};
