/**
 * `kcid requests`: one row per request, in capture order, with the frame of the response that
 * answers it. A row waits until its response arrives or is known never to come (connection end,
 * Produce acks=0, evicted from the pending table); rows behind it wait their turn, so the output
 * is in request order. The wait is bounded: past MAX_WAITING rows, or when the oldest waiting
 * request is older than MAX_WAIT_US of capture time, the oldest is written without a response.
 */
import { displayWidth, padWidth, takeWidth } from '../base/width.js';
import type { RequestObserver } from '../analysis/analyzer.js';
import type { ConnState } from '../analysis/connection-state.js';
import { requestOwner } from '../analysis/owner.js';
import type { KafkaRequest, KafkaResponse } from '../kafka/events.js';
import { API_KEY, apiName, errorLabel } from '../kafka/protocol.js';
import { errorSummary, requestSummary } from '../kafka/summary.js';
import { uuidToBase64 } from '../kafka/uuid.js';
import { int } from '../kafka/fields.js';
import type { readPushMetrics } from '../telemetry/index.js';
import { pushMetricsJson, pushMetricsSummary } from './telemetry-json.js';
import { safeJson } from '../base/json-text.js';
import { EMPTY_LIST } from '../base/lists.js';
import { wrap } from './wrap.js';
import { sanitize } from '../base/sanitize.js';
import { toMicros, isoMicros } from '../base/time.js';
import type { Clock } from './clock.js';

/**
 * One row: a request with the response that answers it, or (apiKey null, requestCaptured false)
 * a response whose request the capture does not hold, listed as tshark lists it.
 */
export interface RequestRow {
  /** The request's frame; for a response without its request, the response's. */
  frame: number;
  time: string;
  client: string;
  broker: string;
  apiKey: number | null;
  apiName: string | null;
  apiVersion: number | null;
  headerVersion: number | null;
  correlationId: number;
  clientId: string | null;
  /**
   * The client instance that owns the request (owner.ts): the ID its header carried, else the
   * connection's (KIP-1313's connection context: its first header ID); null when neither is known.
   */
  clientInstanceId: string | null;
  /** What the request header's tag 0 carried: null when the header had no ClientInstanceId (or the request was not captured). */
  headerClientInstanceId: string | null;
  otherTags: { tag: number; size: number }[];
  responseFrame: number | null;
  errorCode: number | null;
  /** The error code's name and number, `UNSUPPORTED_VERSION (35)` (errorLabel). */
  errorName: string | null;
  latencyMs: number | null;
  /** Which input the frame numbers refer to (0-based here; JSON shows it from 1, as the tables do). */
  input: number;
  requestCaptured: boolean;
  /** `time` as µs since the epoch, for the tables' clocks (not written to JSON). */
  timeUs: number;
  /** With --bodies: the decoded bodies, in the form the output asks for ({@link BodiesForm}). */
  bodies?: RowBodies;
}

/**
 * What --bodies gives each row: 'json', the bodies as Kafka's JSON converters write them (NDJSON);
 * 'summary', a few words on each (the table). A row carries only what its output shows.
 */
export type BodiesForm = 'json' | 'summary';

export interface RowBodies {
  /**
   * 'json': the bodies as Kafka's JSON converters write them (secrets hidden), as UTF-8 the Kafka
   * stage wrote (the analysis run with bodyForm 'json'), 'null' when there is none (no response, or a
   * body that did not parse); 'summary': ''.
   */
  request: string | Uint8Array;
  response: string | Uint8Array;
  /** False when a frame was larger than --max-body-bytes (or cut by the capture) and decoded as far as kept. */
  requestComplete: boolean;
  responseComplete: boolean;
  /** 'summary': the request's topics, partitions, group and member, and its response's errors; 'json': ''. */
  summary: string;
  errors: string;
  /**
   * PushTelemetry, when the row has telemetry decoding: its metrics decoded, as JSON text
   * (pushMetricsJson) for 'json'; for 'summary' they are in `summary`.
   */
  telemetry?: string;
}

/** How `kcid requests --bodies` opens PushTelemetry's metrics: telemetry/index.ts's reader, loaded by the command. */
export interface RowTelemetry {
  read: typeof readPushMetrics;
  /** --max-telemetry-bytes. */
  maxBytes: number;
}

const MAX_WAITING = 50_000;
/** Kafka's request.timeout.ms defaults to 30 s; a response later than twice that is not coming. */
const MAX_WAIT_US = 60_000_000;

interface Pending {
  row: RequestRow;
  /** null for a response without its request. */
  request: KafkaRequest | null;
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
    /** --bodies: each row carries its decoded request and response, in this form. */
    private readonly bodies: BodiesForm | false = false,
    /** --bodies: PushTelemetry rows also carry their metrics, decoded (the analysis keeps those frames whole). */
    private readonly telemetry: RowTelemetry | null = null,
    /** Rows carry `time` as text (false: '', for a consumer that reads timeUs only: the Parquet export, the NDJSON writer). */
    private readonly timeText = true,
  ) {}

  /** Set by a command that needs the capture's start time (filters with offsets). */
  captureStart?: (us: number) => void;

  request(s: ConnState, r: KafkaRequest): void {
    const us = toMicros(r.tsSec, r.tsNsec);
    const h = r.header;
    const p: Pending = {
      row: {
        frame: r.frame,
        time: this.timeText ? isoMicros(us) : '',
        client: s.client,
        broker: s.broker,
        apiKey: h.apiKey,
        apiName: apiName(h.apiKey),
        apiVersion: h.apiVersion,
        headerVersion: h.headerVersion,
        correlationId: h.correlationId,
        clientId: h.clientId,
        clientInstanceId: null,
        headerClientInstanceId: h.clientInstanceId === null ? null : h.clientInstanceId === s.lastHeaderId ? s.lastHeaderIdText : uuidToBase64(h.clientInstanceId),
        otherTags: h.otherTags.length === 0 ? EMPTY_LIST : h.otherTags.map((t) => ({ tag: t.tag, size: t.size })),
        responseFrame: null,
        errorCode: null,
        errorName: null,
        latencyMs: null,
        input: this.input,
        requestCaptured: true,
        timeUs: us,
        // Always present (undefined without --bodies): one shape for every row (a spread made two).
        bodies: this.bodies !== false ? requestBodies(r, this.bodies, this.telemetry) : undefined,
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
    if (r.request === null) {
      this.orphan(s, r);
      return;
    }
    const p = take(s, r.request);
    if (p === undefined) return;
    p.row.responseFrame = r.frame;
    p.row.errorCode = r.errorCode;
    p.row.errorName = r.errorCode === null ? null : errorLabel(r.errorCode);
    p.row.latencyMs = Math.round(toMicros(r.tsSec, r.tsNsec) - p.us) / 1000;
    const bodies = p.row.bodies;
    if (bodies !== undefined) {
      bodies.responseComplete = r.complete && r.bodyComplete;
      if (this.bodies === 'json') bodies.response = r.bodyJson ?? 'null';
      else bodies.errors = errorSummary(r.errorCodes);
    }
    p.ready = true;
    this.drain(p.us);
  }

  /** A response whose request was not captured: a row of its own, in its place among the requests. */
  private orphan(s: ConnState, r: KafkaResponse): void {
    const us = toMicros(r.tsSec, r.tsNsec);
    const row: RequestRow = {
      frame: r.frame,
      time: this.timeText ? isoMicros(us) : '',
      client: s.client,
      broker: s.broker,
      apiKey: null,
      apiName: null,
      apiVersion: null,
      headerVersion: null,
      correlationId: r.correlationId,
      clientId: null,
      clientInstanceId: s.connectionId === null ? null : uuidToBase64(s.connectionId),
      headerClientInstanceId: null,
      otherTags: [],
      responseFrame: r.frame,
      errorCode: null,
      errorName: null,
      latencyMs: null,
      input: this.input,
      requestCaptured: false,
      timeUs: us,
      bodies: undefined,
    };
    this.queue.push({ row, request: null, state: s, ready: true, us });
    this.drain(us);
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
    if (!p.ready && p.request !== null) take(p.state, p.request); // written before its answer (too many waiting, or too long)
    // A request whose header carries no ID belongs to the connection's (KIP-1313's connection context),
    // known by now if a later request of the connection showed it.
    if (p.request !== null) {
      const header = p.row.headerClientInstanceId;
      if (header !== null) p.row.clientInstanceId = header;
      else {
        const owner = requestOwner(p.request.header.clientInstanceId, p.state.connectionId);
        if (owner !== null) p.row.clientInstanceId = uuidToBase64(owner);
      }
    }
    this.emit(p.row, p.state, p.us);
  }
}

/** A row's bodies as the request comes: its JSON as the Kafka stage wrote it, or its summary; the response's come with it. */
function requestBodies(r: KafkaRequest, form: BodiesForm, telemetry: RowTelemetry | null): RowBodies {
  const h = r.header;
  const json = form === 'json';
  const bodies: RowBodies = {
    // 'json': the bytes the Kafka stage wrote from the wire (KafkaOptions.bodyForm 'json').
    request: json ? (r.bodyJson ?? 'null') : '',
    response: json ? 'null' : '',
    requestComplete: r.complete && r.bodyComplete,
    responseComplete: true,
    summary: json ? '' : requestSummary(h.apiKey, h.apiVersion, r.body),
    errors: '',
  };
  // PushTelemetry's Metrics: decoded here, while the frame's blob is at hand (it is not kept for the row).
  if (telemetry !== null && h.apiKey === API_KEY.PushTelemetry && r.body !== null && r.metricsBytes !== null) {
    const type = int(r.body, 'CompressionType') ?? 0;
    const result = telemetry.read(type, r.metricsBlob, r, telemetry.maxBytes);
    if (json) bodies.telemetry = safeJson(pushMetricsJson(type, r.metricsBytes, result));
    else bodies.summary = [bodies.summary, pushMetricsSummary(type, r.metricsBytes, result)].filter((t) => t !== '').join('; ');
  }
  return bodies;
}

/** A row as JSON shows it: `input` counted from 1 (as the tables number inputs), no `timeUs`. */
export function requestJson(row: RequestRow): Omit<RequestRow, 'timeUs' | 'bodies'> {
  const { timeUs: _timeUs, bodies: _bodies, ...rest } = row;
  return { ...rest, input: row.input + 1 };
}

interface Column {
  title: string;
  /** The width a pipe pads to (it never cuts: longer values push the rest of the row). */
  width: number;
  /** The most a terminal gives it (default: width). */
  max?: number;
  /** Narrowest a terminal may shorten it to (values cut with "…"), or its width when it is not shortened. */
  min: number;
  right?: boolean;
  /** Always its width, however narrow the first rows' values (a mark may come in a later row). */
  fixed?: true;
  cell(row: RequestRow, multipleInputs: boolean, clock: Clock): string;
  /** The value in `width` characters when it is longer (default: cut with "…"). */
  shorten?(row: RequestRow, width: number): string;
}

const frameText = (frame: number | null, row: RequestRow, multiple: boolean): string =>
  frame === null ? '-' : multiple ? `${row.input + 1}:${frame}` : String(frame);

/** The columns, in order. */
const COLUMNS: readonly Column[] = [
  { title: 'Frame', width: 7, min: 7, right: true, cell: (r, m) => frameText(r.frame, r, m) },
  { title: 'Time', width: 24, min: 24, cell: (r, _m, clock) => clock(r.timeUs) },
  {
    title: 'Client -> Broker',
    width: 33,
    max: 47,
    min: 27,
    cell: (r) => `${r.client} -> ${r.broker}`,
    // The client's port goes first (the broker's says which listener), then the end of the text.
    shorten: (r, w) => {
      const text = `${r.client.slice(0, r.client.lastIndexOf(':'))} -> ${r.broker}`;
      return displayWidth(text) <= w ? text : `${takeWidth(text, w - 1)}…`;
    },
  },
  { title: 'API', width: 28, min: 14, cell: (r) => (r.apiKey === null ? '(request not captured)' : `${r.apiName} v${r.apiVersion}`) },
  { title: 'Hdr', width: 3, min: 3, cell: (r) => (r.headerVersion === null ? '?' : `v${r.headerVersion}`) },
  { title: 'Corr', width: 10, min: 10, right: true, cell: (r) => String(r.correlationId) },
  { title: 'ClientId', width: 24, max: 40, min: 10, cell: (r) => (r.apiKey === null ? '-' : r.clientId === null ? '(null)' : sanitize(r.clientId)) },
  // An ID the header did not carry (the connection's, inherited) is marked with a trailing '*'.
  { title: 'Client instance ID', width: 23, min: 23, fixed: true, cell: (r) => (r.clientInstanceId === null ? '-' : r.headerClientInstanceId === null && r.apiKey !== null ? `${r.clientInstanceId}*` : r.clientInstanceId) },
  { title: 'Resp', width: 7, min: 7, right: true, cell: (r, m) => frameText(r.responseFrame, r, m) },
  {
    title: 'Err',
    width: 24,
    max: 40,
    min: 4,
    cell: (r) => r.errorName ?? '-',
    // The number says it all when the name does not fit.
    shorten: (r, w) => (r.errorCode === null ? '-' : String(r.errorCode).slice(0, w)),
  },
  { title: 'ms', width: 9, min: 9, right: true, cell: (r) => (r.latencyMs === null ? '-' : r.latencyMs.toFixed(3)) },
];

const index = (title: string): number => COLUMNS.findIndex((c) => c.title === title);

/** Columns a terminal loses first, in order, before and after shortening the long ones. */
const DROP_FIRST = ['Hdr', 'Resp', 'Corr', 'Client instance ID'].map(index);
const DROP_LATER = ['ClientId', 'Time', 'ms', 'Err'].map(index);
/** Shortened, in this order, between the two. */
const SHORTEN = ['ClientId', 'Err', 'API', 'Client -> Broker'].map(index);

const GAP = 2;

export interface RequestTableOptions {
  /** The terminal's columns; undefined for a pipe or a file, where values are never cut. */
  width?: number;
  /**
   * On a terminal, the first rows: each column is made as wide as its widest value among them
   * (at most its usual width), so the room goes where the values need it.
   */
  sample?: readonly RequestRow[];
  multipleInputs: boolean;
  clock: Clock;
}

/**
 * A streaming table: column widths are fixed before the first row, so rows print as they come.
 * On a terminal it fits the width without wrapping a row: the least needed columns go
 * (DROP_FIRST), then long ones are shortened with "…" (SHORTEN), then more go (DROP_LATER), and
 * columns that fit again come back; {@link footer} says which are not shown. Into a pipe or a
 * file every column is there and no value is cut, so `| grep` finds whole ClientIds.
 */
export class RequestTable {
  private readonly widths: number[];
  private readonly shown: number[];
  private readonly dropped: number[] = [];
  private shortened = false;
  private orphans = 0;
  private rows = 0;
  /** Rows shown with an inherited client instance ID (marked '*'). */
  private inherited = 0;

  constructor(private readonly o: RequestTableOptions) {
    this.widths = COLUMNS.map((c) => c.width);
    const t = index('Time');
    this.widths[t] = o.clock.width;
    if (o.multipleInputs) {
      this.widths[index('Frame')] = 9;
      this.widths[index('Resp')] = 9;
    }
    const keep = COLUMNS.map(() => true);
    if (o.width !== undefined && o.sample !== undefined && o.sample.length > 0) {
      COLUMNS.forEach((c, i) => {
        if (c.fixed) return;
        let widest = c.title.length;
        for (const row of o.sample!) widest = Math.max(widest, displayWidth(c.cell(row, o.multipleInputs, o.clock)));
        this.widths[i] = Math.min(Math.max(this.widths[i]!, c.max ?? 0), widest);
      });
    }
    if (o.width !== undefined) {
      const limit = o.width;
      const total = () => this.widths.reduce((sum, w, i) => sum + (keep[i] ? w + GAP : 0), -GAP);
      for (const i of DROP_FIRST) if (total() > limit) (keep[i] = false), this.dropped.push(i);
      const full = [...this.widths];
      const shrinkable = (i: number) => keep[i] && SHORTEN.includes(i) && this.widths[i]! > COLUMNS[i]!.min;
      // Shorten by one the column with the most room above its narrowest, again and again, so no one column pays for all.
      const slack = (i: number) => this.widths[i]! - COLUMNS[i]!.min;
      const shrink = () => {
        while (total() > limit) {
          let most = -1;
          for (const i of SHORTEN) if (shrinkable(i) && (most < 0 || slack(i) > slack(most))) most = i;
          if (most < 0) return;
          this.widths[most]!--;
        }
      };
      shrink();
      for (const i of DROP_LATER) {
        if (total() > limit && keep[i]) (keep[i] = false), this.dropped.push(i);
        shrink();
      }
      // Room left: dropped columns come back, the most needed first, then shortened ones grow back.
      for (const i of [...this.dropped].reverse()) {
        keep[i] = true;
        if (total() > limit) keep[i] = false;
      }
      for (let grown = true; grown && total() < limit; ) {
        grown = false;
        for (const i of SHORTEN) {
          if (keep[i] && this.widths[i]! < full[i]! && total() < limit) (this.widths[i]!++, (grown = true));
        }
      }
      this.shortened = SHORTEN.some((i) => keep[i] && this.widths[i]! < full[i]!);
      this.dropped.splice(0, this.dropped.length, ...COLUMNS.map((_, i) => i).filter((i) => !keep[i]));
    }
    this.shown = COLUMNS.map((_, i) => i).filter((i) => keep[i]);
  }

  private line(cells: (i: number) => string, cut: ((i: number, w: number) => string) | null): string {
    return this.shown
      .map((i) => {
        const w = this.widths[i]!;
        let text = cells(i);
        if (cut !== null && displayWidth(text) > w) text = cut(i, w);
        return padWidth(text, w, COLUMNS[i]!.right);
      })
      .join(' '.repeat(GAP))
      .trimEnd();
  }

  header(): string {
    const cut = this.o.width === undefined ? null : (i: number, w: number) => COLUMNS[i]!.title.slice(0, w);
    return `${this.line((i) => COLUMNS[i]!.title, cut)}\n`;
  }

  row(row: RequestRow): string {
    this.rows++;
    if (row.apiKey === null) this.orphans++;
    else if (row.headerClientInstanceId === null && row.clientInstanceId !== null) this.inherited++;
    const cut =
      this.o.width === undefined
        ? null
        : (i: number, w: number) => COLUMNS[i]!.shorten?.(row, w) ?? `${takeWidth(COLUMNS[i]!.cell(row, this.o.multipleInputs, this.o.clock), w - 1)}…`;
    const bodies = row.bodies === undefined ? '' : bodiesCell(row.bodies);
    return `${this.line((i) => COLUMNS[i]!.cell(row, this.o.multipleInputs, this.o.clock), cut)}${bodies}\n`;
  }

  /** What a '*' means when a row had one, and what the terminal could not show; or nothing. */
  footer(): string {
    const marked = this.inherited > 0 && this.shown.includes(index('Client instance ID'))
      ? "* the request header carried no ClientInstanceId: the ID is its connection's (KIP-1313's connection context)\n"
      : '';
    return marked + this.cut();
  }

  private cut(): string {
    if (this.dropped.length === 0 && !this.shortened) return '';
    const parts = [
      this.dropped.length === 0 ? '' : `${this.dropped.map((i) => COLUMNS[i]!.title).join(', ')} not shown`,
      this.shortened ? 'long values shortened' : '',
    ].filter((p) => p !== '');
    const text = `(${this.o.width} columns: ${parts.join(', ')}; into a pipe or with --format ndjson nothing is cut)`;
    // It is a terminal's line too: wrapped at spaces to its width.
    return `${(this.o.width === undefined ? [text] : wrap(text, this.o.width)).join('\n')}\n`;
  }
}

/** --bodies in table form: the request's topics, partitions, group and member, then its response's errors. */
function bodiesCell(b: RowBodies): string {
  const text = [b.summary, b.errors].filter((t) => t !== '').join('; ');
  return text === '' ? '' : `  ${sanitize(text)}`;
}
