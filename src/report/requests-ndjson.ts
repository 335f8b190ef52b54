/**
 * `kcid requests --format ndjson`: one JSON object per row, written straight as text. The keys are
 * literals in a fixed order (the order of {@link RequestRow}'s fields, as JSON.stringify of
 * requestJson(row) would write them) and each value is escaped as safeJson escapes it (jsonString:
 * JSON.stringify's escapes, plus \u escapes for what a terminal would act on), so a line is
 * byte for byte what safeJson(requestJson(row)) writes (test/requests-ndjson.test.ts holds it
 * there), without the object copied and serialised once per row.
 */
import { jsonString } from '../base/json-text.js';
import type { RequestRow } from './requests.js';

/** A number as JSON.stringify writes it: NaN and the infinities as null, -0 as 0. */
function num(n: number | null): string {
  return n !== null && Number.isFinite(n) ? String(n) : 'null';
}

function tags(list: RequestRow['otherTags']): string {
  if (list.length === 0) return '[]';
  let out = '[';
  for (let i = 0; i < list.length; i++) out += `${i === 0 ? '' : ','}{"tag":${num(list[i]!.tag)},"size":${num(list[i]!.size)}}`;
  return `${out}]`;
}

/** `truncated`, indexed by (request cut ? 2 : 0) + (response cut ? 1 : 0). */
const TRUNCATED = ['[]', '["response"]', '["request"]', '["request","response"]'] as const;

/**
 * One row as a line. With --bodies, `request` and `response` follow (Kafka's JSON converter form,
 * terminal-safe as schema/json.ts writes it), and `truncated` lists the bodies decoded only as far
 * as kcid kept; a PushTelemetry row has its metrics decoded between them, as `telemetry`.
 * `input` is counted from 1, as the tables number inputs; `timeUs` is not written.
 */
export function requestNdjson(row: RequestRow): string {
  const head =
    `{"frame":${num(row.frame)},"time":${jsonString(row.time)},"client":${jsonString(row.client)},"broker":${jsonString(row.broker)}` +
    `,"apiKey":${num(row.apiKey)},"apiName":${jsonString(row.apiName)},"apiVersion":${num(row.apiVersion)},"headerVersion":${num(row.headerVersion)}` +
    `,"correlationId":${num(row.correlationId)},"clientId":${jsonString(row.clientId)},"clientInstanceId":${jsonString(row.clientInstanceId)}` +
    `,"otherTags":${tags(row.otherTags)},"responseFrame":${num(row.responseFrame)},"errorCode":${num(row.errorCode)},"errorName":${jsonString(row.errorName)}` +
    `,"latencyMs":${num(row.latencyMs)},"input":${num(row.input + 1)},"requestCaptured":${row.requestCaptured ? 'true' : 'false'}`;
  const b = row.bodies;
  if (b === undefined) return `${head}}\n`;
  const telemetry = b.telemetry === undefined ? '' : `,"telemetry":${b.telemetry}`;
  const truncated = TRUNCATED[(b.requestComplete ? 0 : 2) + (b.responseComplete ? 0 : 1)];
  return `${head},"request":${b.request}${telemetry},"response":${b.response},"truncated":${truncated}}\n`;
}
