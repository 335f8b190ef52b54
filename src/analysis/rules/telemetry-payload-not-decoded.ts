import type { TelemetryRule } from './rule.js';
import { compressionName } from './telemetry-common.js';

export const telemetryPayloadNotDecoded: TelemetryRule = {
  kind: 'telemetry',
  readsMetrics: true,
  id: 'telemetry-payload-not-decoded',
  severity: 'info',
  summary: 'PushTelemetry metrics kcid did not decode: larger than --max-telemetry-bytes (compressed or not), or cut by the capture.',
  explanation:
    'kcid decodes a push\'s metrics within a bound (--max-telemetry-bytes, 16 MiB by default): a frame ' +
    'larger than that is not kept, and a blob that would decompress past it (a compression bomb ' +
    'included) is refused from what its codec declares, or stopped where its output passes the bound. ' +
    'A frame the capture cut short cannot be decoded either. The push is still judged by the rules ' +
    'that need no metrics.',
  spec: 'kcid\'s own bound; KIP-714 lets the broker cap pushes with TelemetryMaxBytes (see telemetry-too-large).',
  check(c, report) {
    for (const p of c.pushes) {
      const e = p.push.payloadError;
      if (e === null || (e.kind !== 'too-large' && e.kind !== 'not-kept')) continue;
      report({ event: p.push, message: `Metrics (${p.push.metricsBytes} bytes, ${compressionName(p.push.compressionType)}) not decoded: ${e.message.replace(/^metrics not decoded: /, '')}` });
    }
  },
};
