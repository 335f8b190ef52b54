/**
 * The OTLP metrics schema kcid decodes, as a protobufjs JSON descriptor: the one place its field
 * numbers are written. From opentelemetry-proto (v1 protocol, as of 2026-08), the files and field
 * numbers below; fields kcid does not read (descriptions, units, values, buckets, exemplars,
 * flags, entity refs, metadata) are left out and skipped as unknown fields by the decoder:
 *
 *   opentelemetry/proto/metrics/v1/metrics.proto
 *     MetricsData.resource_metrics 1; ResourceMetrics.resource 1, scope_metrics 2, schema_url 3;
 *     ScopeMetrics.scope 1, metrics 2; Metric.name 1, gauge 5, sum 7, histogram 9,
 *     exponential_histogram 10, summary 11; Gauge.data_points 1; Sum.data_points 1,
 *     aggregation_temporality 2, is_monotonic 3; Histogram / ExponentialHistogram.data_points 1,
 *     aggregation_temporality 2; Summary.data_points 1; NumberDataPoint / HistogramDataPoint /
 *     SummaryDataPoint.start_time_unix_nano 2, time_unix_nano 3, attributes 7 / 9 / 7;
 *     ExponentialHistogramDataPoint.attributes 1, start_time_unix_nano 2, time_unix_nano 3;
 *     AggregationTemporality UNSPECIFIED 0, DELTA 1, CUMULATIVE 2.
 *   opentelemetry/proto/common/v1/common.proto
 *     AnyValue.string_value 1, bool_value 2, int_value 3, double_value 4, array_value 5,
 *     kvlist_value 6, bytes_value 7; KeyValue.key 1, value 2; InstrumentationScope.name 1, version 2.
 *     (array_value and kvlist_value are read as bytes, not nested messages: kcid shows that a value
 *     is a list, and a hostile payload cannot make the decoder recurse.)
 *   opentelemetry/proto/resource/v1/resource.proto
 *     Resource.attributes 1.
 */
import type { INamespace } from 'protobufjs';

const dataPoint = (attributes: number) => ({
  fields: {
    attributes: { rule: 'repeated', type: 'KeyValue', id: attributes },
    startTimeUnixNano: { type: 'fixed64', id: 2 },
    timeUnixNano: { type: 'fixed64', id: 3 },
  },
});

export const OTLP_METRICS_SCHEMA: INamespace = {
  nested: {
    MetricsData: { fields: { resourceMetrics: { rule: 'repeated', type: 'ResourceMetrics', id: 1 } } },
    ResourceMetrics: {
      fields: {
        resource: { type: 'Resource', id: 1 },
        scopeMetrics: { rule: 'repeated', type: 'ScopeMetrics', id: 2 },
        schemaUrl: { type: 'string', id: 3 },
      },
    },
    Resource: { fields: { attributes: { rule: 'repeated', type: 'KeyValue', id: 1 } } },
    ScopeMetrics: {
      fields: {
        scope: { type: 'InstrumentationScope', id: 1 },
        metrics: { rule: 'repeated', type: 'Metric', id: 2 },
      },
    },
    InstrumentationScope: { fields: { name: { type: 'string', id: 1 }, version: { type: 'string', id: 2 } } },
    Metric: {
      oneofs: { data: { oneof: ['gauge', 'sum', 'histogram', 'exponentialHistogram', 'summary'] } },
      fields: {
        name: { type: 'string', id: 1 },
        gauge: { type: 'Gauge', id: 5 },
        sum: { type: 'Sum', id: 7 },
        histogram: { type: 'Histogram', id: 9 },
        exponentialHistogram: { type: 'ExponentialHistogram', id: 10 },
        summary: { type: 'Summary', id: 11 },
      },
    },
    Gauge: { fields: { dataPoints: { rule: 'repeated', type: 'NumberDataPoint', id: 1 } } },
    Sum: {
      fields: {
        dataPoints: { rule: 'repeated', type: 'NumberDataPoint', id: 1 },
        aggregationTemporality: { type: 'int32', id: 2 },
        isMonotonic: { type: 'bool', id: 3 },
      },
    },
    Histogram: {
      fields: {
        dataPoints: { rule: 'repeated', type: 'HistogramDataPoint', id: 1 },
        aggregationTemporality: { type: 'int32', id: 2 },
      },
    },
    ExponentialHistogram: {
      fields: {
        dataPoints: { rule: 'repeated', type: 'ExponentialHistogramDataPoint', id: 1 },
        aggregationTemporality: { type: 'int32', id: 2 },
      },
    },
    Summary: { fields: { dataPoints: { rule: 'repeated', type: 'SummaryDataPoint', id: 1 } } },
    NumberDataPoint: dataPoint(7),
    HistogramDataPoint: dataPoint(9),
    ExponentialHistogramDataPoint: dataPoint(1),
    SummaryDataPoint: dataPoint(7),
    KeyValue: { fields: { key: { type: 'string', id: 1 }, value: { type: 'AnyValue', id: 2 } } },
    AnyValue: {
      oneofs: { value: { oneof: ['stringValue', 'boolValue', 'intValue', 'doubleValue', 'arrayValue', 'kvlistValue', 'bytesValue'] } },
      fields: {
        stringValue: { type: 'string', id: 1 },
        boolValue: { type: 'bool', id: 2 },
        intValue: { type: 'int64', id: 3 },
        doubleValue: { type: 'double', id: 4 },
        arrayValue: { type: 'bytes', id: 5 },
        kvlistValue: { type: 'bytes', id: 6 },
        bytesValue: { type: 'bytes', id: 7 },
      },
    },
  },
};

/**
 * The same schema as the telemetry rules read it: data points counted, not opened (their attributes
 * and times, which no rule reads, are skipped as unknown fields, as values already are).
 */
export const OTLP_METRICS_RULES_SCHEMA: INamespace = {
  nested: {
    ...OTLP_METRICS_SCHEMA.nested,
    NumberDataPoint: { fields: {} },
    HistogramDataPoint: { fields: {} },
    ExponentialHistogramDataPoint: { fields: {} },
    SummaryDataPoint: { fields: {} },
  },
};

/** AggregationTemporality (metrics.proto). */
export const TEMPORALITY = ['unspecified', 'delta', 'cumulative'] as const;
