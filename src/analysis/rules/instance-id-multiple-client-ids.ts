import { ZERO_ID } from '../instances.js';
import { quoted } from '../../base/sanitize.js';
import type { ReportRule } from './rule.js';

export const instanceIdMultipleClientIds: ReportRule = {
  kind: 'report',
  id: 'instance-id-multiple-client-ids',
  severity: 'warning',
  revision: 'both',
  summary: "One client instance ID's connections name different ClientIds.",
  explanation:
    'ClientId is a configuration of the client instance (client.id), fixed when it is constructed, and under ' +
    'KIP-1313 it is sent on the first request of every connection. One instance naming two ClientIds points ' +
    'to two instances sharing an ID, which breaks per-client quotas, logs and metrics that key on either ' +
    'identifier. Judged across every capture given.',
  spec:
    'KIP-1313: "The client instance ID is calculated by the client during the constructor of the client" and ' +
    'ClientId is sent "with the exception of the initial request on each connection" only.',
  check(instance, report) {
    // The zero UUID is not an identity: zero-client-instance-id reports it, request by request.
    if (instance.clientInstanceId === null || instance.clientInstanceId === ZERO_ID || instance.clientIds.length < 2) return;
    const second = instance.clientIds[1]!;
    const at = instance.connections.findIndex((c) => c.clientIds.includes(second));
    report({
      connection: Math.max(at, 0),
      message: `client instance ID ${instance.clientInstanceId} names ${instance.clientIds.length} ClientIds: ${instance.clientIds.map(quoted).join(', ')}`,
    });
  },
};
