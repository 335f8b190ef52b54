import type { TelemetryRule } from './rule.js';

export const telemetryTemporalityMismatch: TelemetryRule = {
  kind: 'telemetry',
  readsMetrics: true,
  id: 'telemetry-temporality-mismatch',
  severity: 'warning',
  summary: "Pushed sums or histograms with an aggregation temporality other than the subscription's DeltaTemporality asks.",
  explanation:
    'The subscription says whether the broker wants counters and histograms as deltas since the ' +
    'previous push or as cumulative totals (DeltaTemporality); the client must push them that way ' +
    '(OTLP AggregationTemporality DELTA or CUMULATIVE; UNSPECIFIED is neither). Gauges and summaries ' +
    'have no temporality. It reads the metrics inside the pushes: kcid decodes them while a rule that does, such as this one, is on.',
  spec:
    'KIP-714, GetTelemetrySubscriptionsResponse: "DeltaTemporality: If True; monotonic/counter metrics are to be emitted as deltas to the previous sample. ' +
    'If False; monotonic/counter metrics are to be emitted as cumulative absolute values."',
  check(c, report) {
    for (const p of c.pushes) {
      const sub = p.subscription;
      const payload = p.push.payload;
      if (sub === null || payload === null) continue;
      const want = sub.deltaTemporality ? 'delta' : 'cumulative';
      const wrong = payload.metrics.filter((m) => m.temporality !== null && m.temporality !== want && m.points > 0);
      if (wrong.length === 0) continue;
      const kinds = [...new Set(wrong.map((m) => m.temporality))].join(' and ');
      report({
        event: p.push,
        message: `${wrong.length} metrics pushed with ${kinds} temporality, e.g. ${JSON.stringify(wrong[0]!.name)} (${wrong[0]!.type}); the subscription (frame ${sub.responseFrame}) asks for ${want} (DeltaTemporality ${sub.deltaTemporality})`,
      });
    }
  },
};
