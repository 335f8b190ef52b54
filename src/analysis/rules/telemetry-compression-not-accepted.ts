import type { TelemetryRule } from './rule.js';
import { answer, compressionName } from './telemetry-common.js';

export const telemetryCompressionNotAccepted: TelemetryRule = {
  kind: 'telemetry',
  id: 'telemetry-compression-not-accepted',
  severity: 'error',
  summary: "A PushTelemetry compressed with a CompressionType not in the subscription's AcceptedCompressionTypes.",
  explanation:
    'The subscription lists the codecs the broker accepts for telemetry; the client compresses with ' +
    'one of them or sends the metrics uncompressed (CompressionType 0, always accepted). Another ' +
    'codec is answered UNSUPPORTED_COMPRESSION_TYPE, after which the client must fetch its ' +
    'subscription again and pick a codec from it.',
  spec:
    'KIP-714, GetTelemetrySubscriptionsResponse: "AcceptedCompressionTypes: The compression types the broker accepts for PushTelemetryRequest.CompressionType." ' +
    'Error table, UNSUPPORTED_COMPRESSION_TYPE: the client must get its subscription again (paraphrased).',
  check(c, report) {
    for (const p of c.pushes) {
      const sub = p.subscription;
      const type = p.push.compressionType;
      if (sub === null || type === 0 || sub.acceptedCompressionTypes.includes(type)) continue;
      const accepted = sub.acceptedCompressionTypes.map(compressionName).join(', ') || 'none listed';
      report({
        event: p.push,
        message: `PushTelemetry compressed with ${compressionName(type)} (${type}); the subscription (frame ${sub.responseFrame}) accepts ${accepted}; ${answer(p.push)}`,
      });
    }
  },
};
