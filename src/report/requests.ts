/**
 * `kcid requests`: one row per request, in capture order, with the frame of the response that
 * answers it. A row waits until its response arrives or is known never to come (connection end,
 * Produce acks=0, evicted from the pending table); rows behind it wait their turn, so the output
 * is in request order. The wait is bounded: past MAX_WAITING rows, or when the oldest waiting
 * request is older than MAX_WAIT_US of capture time, the oldest is written without a response.
 */
import type { RequestObserver } from '../analysis/analyzer.js';
import type { ConnState } from '../analysis/connection-state.js';
import { requestOwner } from '../analysis/owner.js';
import type { KafkaRequest, KafkaResponse } from '../kafka/events.js';
import { apiName, errorLabel } from '../kafka/protocol.js';
import { bodyJson } from '../kafka/secrets.js';
import { errorSummary, requestSummary } from '../kafka/summary.js';
import { uuidToBase64 } from '../kafka/uuid.js';
import { safeJson, terminalSafe } from '../base/json-text.js';
import { sanitize } from '../base/sanitize.js';
import { toMicros, isoMicros } from '../base/time.js';

export interface RequestRow {
  frame: number;
  time: string;
  client: string;
  broker: string;
  apiKey: number;
  apiName: string;
  apiVersion: number;
  headerVersion: number | null;
  correlationId: number;
  clientId: string | null;
  clientInstanceId: string | null;
  otherTags: { tag: number; size: number }[];
  responseFrame: number | null;
  errorCode: number | null;
  latencyMs: number | null;
  /** Which input the frame numbers refer to (0-based). */
  input: number;
  /**
   * With --bodies: the decoded bodies as Kafka's JSON converters write them (JSON text, secrets hidden),
   * null when there is none (no response, or a body that did not parse); a short summary for tables.
   */
  bodies?: RowBodies;
}

export interface RowBodies {
  request: string;
  response: string;
  /** False when a frame was larger than --max-body-bytes (or cut by the capture) and decoded as far as kept. */
  requestComplete: boolean;
  responseComplete: boolean;
  summary: string;
  errors: string;
}

const MAX_WAITING = 50_000;
/** Kafka's request.timeout.ms defaults to 30 s; a response later than twice that is not coming. */
const MAX_WAIT_US = 60_000_000;

interface Pending {
  row: RequestRow;
  request: KafkaRequest;
  state: ConnState;
  ready: boolean;
  us: number;
}

/**
 * The connection's rows awaiting a response, oldest first, kept in the connection's observer slot
 * (its responses come in request order, so the one looked for is nearly always the first).
 */
function awaiting(s: ConnState): Pending[] {
  let list = s.observerState as Pending[] | null;
  if (list === null) s.observerState = list = [];
  return list;
}

function take(s: ConnState, r: KafkaRequest): Pending | undefined {
  const list = s.observerState as Pending[] | null;
  if (list === null) return undefined;
  for (let i = 0; i < list.length; i++) {
    if (list[i]!.request === r) return i === 0 ? list.shift() : list.splice(i, 1)[0];
  }
  return undefined;
}

export class RequestRows implements RequestObserver {
  /** Rows in request order; written ones are cleared to null so the queue does not keep them. */
  private readonly queue: (Pending | null)[] = [];
  private head = 0;

  constructor(
    private readonly input: number,
    private readonly emit: (row: RequestRow, s: ConnState, us: number) => void,
    /** --bodies: each row carries its decoded request and response. */
    private readonly bodies = false,
  ) {}

  /** Set by a command that needs the capture's start time (filters with offsets). */
  captureStart?: (us: number) => void;

  request(s: ConnState, r: KafkaRequest): void {
    const us = toMicros(r.tsSec, r.tsNsec);
    const h = r.header;
    const p: Pending = {
      row: {
        frame: r.frame,
        time: isoMicros(us),
        client: s.client,
        broker: s.broker,
        apiKey: h.apiKey,
        apiName: apiName(h.apiKey),
        apiVersion: h.apiVersion,
        headerVersion: h.headerVersion,
        correlationId: h.correlationId,
        clientId: h.clientId,
        clientInstanceId: h.clientInstanceId === null ? null : uuidToBase64(h.clientInstanceId),
        otherTags: h.otherTags.map((t) => ({ tag: t.tag, size: t.size })),
        responseFrame: null,
        errorCode: null,
        latencyMs: null,
        input: this.input,
        ...(this.bodies ? { bodies: requestBodies(r) } : {}),
      },
      request: r,
      state: s,
      ready: !r.expectsResponse,
      us,
    };
    this.queue.push(p);
    if (!p.ready) awaiting(s).push(p);
    this.drain(us);
  }

  response(s: ConnState, r: KafkaResponse): void {
    if (r.request === null) return;
    const p = take(s, r.request);
    if (p === undefined) return;
    p.row.responseFrame = r.frame;
    p.row.errorCode = r.errorCode;
    p.row.latencyMs = Math.round(toMicros(r.tsSec, r.tsNsec) - p.us) / 1000;
    if (p.row.bodies !== undefined) {
      const h = r.request.header;
      p.row.bodies.response = r.body === null ? 'null' : bodyJson('response', h.apiKey, h.apiVersion, r.body);
      p.row.bodies.responseComplete = r.complete && r.bodyComplete;
      p.row.bodies.errors = errorSummary(r.errorCodes);
    }
    p.ready = true;
    this.drain(p.us);
  }

  unanswered(s: ConnState, r: KafkaRequest): void {
    const p = take(s, r);
    if (p === undefined) return;
    p.ready = true;
    this.drain(p.us);
  }

  /** End of input: everything still waiting is written (at the end of time, every row has waited long enough). */
  finish(): void {
    this.drain(Infinity);
    this.queue.length = 0;
    this.head = 0;
  }

  private drain(nowUs: number): void {
    while (this.head < this.queue.length) {
      const p = this.queue[this.head]!;
      const waiting = this.queue.length - this.head;
      if (!p.ready && waiting <= MAX_WAITING && nowUs - p.us <= MAX_WAIT_US) break;
      this.queue[this.head++] = null;
      this.write(p);
    }
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
  }

  private write(p: Pending): void {
    if (!p.ready) take(p.state, p.request); // written before its answer (too many waiting, or too long)
    // A request whose header carries no ID belongs to the connection's (KIP-1313's connection context).
    if (p.row.clientInstanceId === null) {
      const owner = requestOwner(p.request.header.clientInstanceId, p.state.connectionId);
      if (owner !== null) p.row.clientInstanceId = uuidToBase64(owner);
    }
    this.emit(p.row, p.state, p.us);
  }
}

function requestBodies(r: KafkaRequest): RowBodies {
  const h = r.header;
  return {
    request: r.body === null ? 'null' : bodyJson('request', h.apiKey, h.apiVersion, r.body),
    response: 'null',
    requestComplete: r.complete && r.bodyComplete,
    responseComplete: true,
    summary: requestSummary(h.apiKey, h.apiVersion, r.body),
    errors: '',
  };
}

/**
 * One JSON object per line, keys in a fixed order. With --bodies, `request` and `response` follow
 * (Kafka's JSON converter form), and `truncated` lists the bodies decoded only as far as kcid kept.
 */
export function requestNdjson(row: RequestRow): string {
  const { bodies, ...plain } = row;
  const text = safeJson(plain);
  if (bodies === undefined) return `${text}\n`;
  const truncated = [...(bodies.requestComplete ? [] : ['request']), ...(bodies.responseComplete ? [] : ['response'])];
  return `${text.slice(0, -1)},"request":${terminalSafe(bodies.request)},"response":${terminalSafe(bodies.response)},"truncated":${JSON.stringify(truncated)}}\n`;
}

const COLUMNS: [title: string, width: number][] = [
  ['Frame', 7],
  ['Time', 15],
  ['Client -> Broker', 45],
  ['API', 28],
  ['Hdr', 3],
  ['Corr', 10],
  ['ClientId', 24],
  ['Client instance ID', 22],
  ['Resp', 7],
  ['Err', 28],
  ['ms', 9],
];

function line(cells: string[]): string {
  return cells
    .map((c, i) => {
      const w = COLUMNS[i]![1];
      const fitted = c.length > w ? `${c.slice(0, w - 1)}…` : c;
      return i === 0 || i >= 8 ? fitted.padStart(w) : fitted.padEnd(w);
    })
    .join('  ')
    .trimEnd();
}

/** A streaming table: fixed column widths, so rows print as they come. */
export function requestTableHeader(): string {
  return `${line(COLUMNS.map(([t]) => t))}\n`;
}

export function requestTableRow(row: RequestRow, multipleInputs: boolean): string {
  return `${line([
    multipleInputs ? `${row.input + 1}:${row.frame}` : String(row.frame),
    row.time.slice(11, 26),
    `${row.client} -> ${row.broker}`,
    `${row.apiName} v${row.apiVersion}`,
    row.headerVersion === null ? '?' : `v${row.headerVersion}`,
    String(row.correlationId),
    row.clientId === null ? '(null)' : sanitize(row.clientId),
    row.clientInstanceId ?? '-',
    row.responseFrame === null ? '-' : String(row.responseFrame),
    row.errorCode === null ? '-' : errorLabel(row.errorCode),
    row.latencyMs === null ? '-' : row.latencyMs.toFixed(3),
  ])}${row.bodies === undefined ? '' : bodiesCell(row.bodies)}\n`;
}

/** --bodies in table form: the request's topics, partitions, group and member, then its response's errors. */
function bodiesCell(b: RowBodies): string {
  const text = [b.summary, b.errors].filter((t) => t !== '').join('; ');
  return text === '' ? '' : `  ${sanitize(text)}`;
}
