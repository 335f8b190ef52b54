/**
 * One way through: capture → net → tcp → kafka → analysis, for one input. Returns the input's
 * part of the mergeable summary; findings are also streamed to `onFinding` as they are made.
 */
import { createReadStream } from 'node:fs';
import { readCapture, readCaptureStream } from '../capture/read.js';
import type { PacketRef, PacketSink } from '../capture/types.js';
import { KafkaStreamFactory } from '../kafka/conversation.js';
import { decodeTcp } from '../net/decode.js';
import { newNetStats, newSegment } from '../net/types.js';
import { Reassembler } from '../tcp/reassembly.js';
import { ActivityCollector } from './activity.js';
import { CaptureAnalyzer } from './analyzer.js';
import type { FindingSink, RequestObserver } from './observer.js';
import { RequestWatcher } from './tracker.js';
import type { LiveChecks } from './live-checks.js';
import type { TelemetryDecoding } from './telemetry-events.js';
import { compareConnections } from './report.js';
import { makeFinding } from './finding.js';
import type { RuleMeta } from './rules/rule.js';
import { captureTruncated, tlsKeylogUnmatched } from './rules/stream-rules.js';
import type { ConnectionSummary, Finding, InputSummary, TelemetryEvent } from './types.js';
import { toMicros } from '../base/time.js';
import { SECRETS_TLS_KEY_LOG } from '../capture/types.js';
import { KeyLog, type SharedKeyLog } from '../tls/keylog.js';
import { DEFAULT_MAX_TELEMETRY_BYTES } from '../telemetry/names.js';
import { activateProtocol, type Kip1313Revision } from '../kafka/protocol.js';
import { groupDigits } from '../base/digits.js';

export interface AnalyzeOptions {
  /** Ports that are Kafka without detection (default 9092). */
  kafkaPorts: ReadonlySet<number>;
  /** Also detect Kafka on other ports. */
  detect: boolean;
  maxFrameBytes: number;
  onProgress?: (bytesRead: number, totalBytes: number | null, packets: number, connections: number, findings: number) => void;
  /** Live TCP connections kept at most (the least recently active is retired beyond it; default 100,000). */
  maxConnections?: number;
  /** A connection idle this long in capture time is retired (default 600 s). */
  idleTimeoutSec?: number;
  /** Connection summaries kept for the report (default 250,000); later connections are counted only. */
  maxSummaries?: number;
  /** Findings of one rule kept per input (default 1,000); the rest are counted only. */
  maxFindings?: number;
  /** Stop reading at this signal (follow mode's Ctrl-C) and analyse what was read. */
  signal?: AbortSignal;
  /** --kafka-specs: decode with the schemas of this folder or kafka-clients jar instead of the built-in ones. */
  kafkaSpecs?: string;
  /** --kip-1313: the revision request headers are judged by (default voting: header v2). */
  kip1313?: Kip1313Revision;
  /** kcid requests --bodies: decode every body, keeping up to this many bytes of each frame. */
  maxBodyBytes?: number;
  /**
   * False: the requests are only shown (kcid requests): no rule is run and no connection summarised,
   * so the result lists no connections or findings (a RequestWatcher listens, not a CaptureAnalyzer).
   */
  judge?: boolean;
  /**
   * Follow mode: the checks across connections run as their evidence comes, their findings told to
   * this LiveChecks' sink when first shown (the result's report judges them again: LiveChecks.shown).
   */
  live?: LiveChecks;
  /** With maxBodyBytes: each body decoded into a value (the default), or written as JSON (KafkaOptions.bodyForm). */
  bodyForm?: 'value' | 'json';
  /** Collect traffic over time for the page (see activity.ts): `--format html` and `summary-json`. */
  activity?: boolean;
  /** NSS key log files for TLS connections (--tls-keylog), read by each analysis: secrets never travel in messages. */
  tlsKeylogs?: readonly string[];
  /** The tlsKeylogs files already read (analyzeAll reads them once for every input and worker): used instead of reading them. */
  tlsKeyLog?: SharedKeyLog;
  /**
   * An output shows the pushes' metrics (kcid telemetry, analyze --telemetry, clients --instance):
   * every push decoded, the decoder loaded up front. Otherwise {@link telemetry} says what is done.
   */
  decodeTelemetry?: boolean;
  /**
   * KIP-714 telemetry for the telemetry rules, when decodeTelemetry is not set: 'rules' (the default)
   * collects the conversation and decodes the pushes' metrics for the rules that read them, loading
   * the decoder at the first push, so a capture without one pays nothing; 'sizes' collects the
   * conversation and decodes nothing (those rules are off: blobs are sized, never copied); 'off'
   * collects nothing (a command that shows no findings).
   */
  telemetry?: 'rules' | 'sizes' | 'off';
  /** The most a telemetry blob may decompress to, and the largest PushTelemetry frame kept (default 16 MiB). */
  maxTelemetryBytes?: number;
}

/** The chunks of `source` until `signal` fires; then the iteration simply ends. */
async function* untilAborted(source: AsyncIterable<Buffer>, signal: AbortSignal): AsyncGenerator<Buffer> {
  if (signal.aborted) return;
  const it = source[Symbol.asyncIterator]();
  const aborted = new Promise<null>((resolve) => signal.addEventListener('abort', () => resolve(null), { once: true }));
  while (true) {
    const next = await Promise.race([it.next(), aborted]);
    if (next === null || next.done === true) {
      // A pending read would keep stdin (and the process) alive: close the source outright.
      (source as { destroy?: () => void }).destroy?.();
      return;
    }
    yield next.value;
  }
}

export const DEFAULT_KAFKA_PORT = 9092;
/** Ports that are Kafka without detection by default: 9092, and 9093, where SSL listeners usually are. */
export const DEFAULT_KAFKA_PORTS: readonly number[] = [DEFAULT_KAFKA_PORT, 9093];
/** Kafka's socket.request.max.bytes default. */
export const DEFAULT_MAX_FRAME_BYTES = 100 * 1024 * 1024;

/** Findings of one rule kept per input by default: the first thousand say what a million would. */
export const DEFAULT_MAX_FINDINGS = 1000;

export interface InputResult {
  input: InputSummary;
  connections: ConnectionSummary[];
  findings: Finding[];
  /** KIP-714 telemetry requests, in capture order (absent in a result made by an older worker or a test). */
  telemetry?: TelemetryEvent[];
}

export async function analyzeInput(
  file: string,
  inputIndex: number,
  opts: AnalyzeOptions,
  onFinding: FindingSink = () => {},
  observer?: RequestObserver,
): Promise<InputResult> {
  activateProtocol({ kafkaSpecs: opts.kafkaSpecs ?? null, kip1313: opts.kip1313 ?? 'voting' });
  const findings: Finding[] = [];
  const maxFindings = opts.maxFindings ?? DEFAULT_MAX_FINDINGS;
  /** rule id → findings made so far (listed or not). */
  const perRule = new Map<string, number>();
  const keep = (f: Finding): void => {
    const n = (perRule.get(f.rule) ?? 0) + 1;
    perRule.set(f.rule, n);
    if (n > maxFindings) return;
    findings.push(f);
    onFinding(f);
  };
  const clock = { tsSec: 0, tsNsec: 0 };
  const activity = opts.activity === true ? new ActivityCollector() : null;
  // Both would keep their state in the connection's one observer slot; no command asks for both.
  if (activity !== null && observer !== undefined) throw new Error('activity is collected by a run without another request observer');
  if (activity !== null) observer = activity;
  // The files read once per run (analyzeAll) and shared; read here only for a caller that did not.
  const tlsKeys = opts.tlsKeyLog !== undefined ? KeyLog.fromShared(opts.tlsKeyLog) : KeyLog.readFiles(opts.tlsKeylogs ?? []);
  const mode = opts.decodeTelemetry === true ? 'all' : (opts.telemetry ?? 'rules');
  // protobufjs and the decompressors are evaluated only when pushes are decoded: up front when an
  // output shows them, else at the first push.
  // Follow mode loads it up front too: a push's findings are printed once it is decoded, and a decoder
  // loading meanwhile would hold them back until the input pauses.
  const read = mode === 'all' || (opts.live !== undefined && mode !== 'off') ? (await import('../telemetry/index.js')).readPushMetrics : null;
  const telemetry: TelemetryDecoding = {
    collect: mode !== 'off',
    decode: mode === 'all' ? 'all' : mode === 'rules' ? 'lazy' : 'none',
    maxBytes: opts.maxTelemetryBytes ?? DEFAULT_MAX_TELEMETRY_BYTES,
    read,
    load: async () => (await import('../telemetry/index.js')).readPushMetrics,
    ...(opts.live === undefined ? {} : { onComplete: (e: TelemetryEvent) => opts.live!.telemetry(e) }),
  };
  const analyzer = opts.judge ?? true ? new CaptureAnalyzer(inputIndex, keep, observer, opts.maxSummaries, telemetry, opts.live ?? null) : new RequestWatcher(inputIndex, observer ?? {}, telemetry);
  // PushTelemetry frames are kept whole (up to the bound) when their metrics are decoded: for the
  // telemetry rules and outputs, or for kcid requests --bodies, whose rows show them.
  const keepTelemetryBytes = (telemetry.collect && telemetry.decode !== 'none') || opts.maxBodyBytes !== undefined ? telemetry.maxBytes : 0;
  const unrecognised = new Map<number, number>();
  const reassembler = new Reassembler(
    new KafkaStreamFactory(analyzer, {
      unrecognised,
      kafkaPorts: opts.kafkaPorts,
      detect: opts.detect,
      maxFrameBytes: opts.maxFrameBytes,
      clock,
      tlsKeys,
      keepTelemetryBytes,
      ...(opts.maxBodyBytes === undefined ? {} : { maxBodyBytes: opts.maxBodyBytes }),
      ...(opts.bodyForm === undefined ? {} : { bodyForm: opts.bodyForm }),
    }),
    {
      kafkaPorts: opts.kafkaPorts,
      ...(opts.maxConnections === undefined ? {} : { maxConnections: opts.maxConnections }),
      ...(opts.idleTimeoutSec === undefined ? {} : { idleTimeoutSec: opts.idleTimeoutSec }),
    },
  );
  const net = newNetStats();
  const segment = newSegment();
  const portBytes = new Float64Array(65536);
  let packets = 0;
  let startUs: number | null = null;
  const sink: PacketSink = {
    onPacket(p: PacketRef) {
      if (packets === 0) {
        startUs = toMicros(p.tsSec, p.tsNsec);
        observer?.captureStart?.(startUs);
      }
      packets++;
      clock.tsSec = p.tsSec;
      clock.tsNsec = p.tsNsec;
      if (decodeTcp(p, segment, net)) {
        // TCP payload bytes by port (both ends): 512 KiB, for the note on traffic kcid did not recognise.
        const n = segment.payloadLen + segment.missingLen;
        if (n > 0) {
          portBytes[segment.srcPort]! += n;
          portBytes[segment.dstPort]! += n;
        }
        reassembler.segment(segment);
      }
    },
    onSecrets(type: number, data: Buffer) {
      if (type === SECRETS_TLS_KEY_LOG) tlsKeys.add("the capture's decryption secrets block", data.toString('latin1'));
    },
  };
  const progress = opts.onProgress;
  const readOpts =
    progress === undefined
      ? {}
      : { onProgress: (read: number, total: number | null) => progress(read, total, packets, analyzer.connections.length + analyzer.passedConnections + analyzer.liveConnections, findings.length) };
  const stats =
    opts.signal === undefined
      ? await readCapture(file, sink, readOpts)
      : await readCaptureStream(file, untilAborted(file === '-' ? process.stdin : createReadStream(file), opts.signal), sink, readOpts);
  reassembler.finish();
  await analyzer.telemetry.settle();

  let unknownLinkTypePackets = 0;
  for (const n of net.unknownLinkTypes.values()) unknownLinkTypePackets += n;
  const notes = [...stats.notes];
  // Counts with thousands separators, as in the summary line: '1,000,000 connections ...'.
  const count = (n: number): string => groupDigits(n);
  for (const [type, n] of [...net.unknownLinkTypes].sort((a, b) => a[0] - b[0])) {
    notes.push(`${count(n)} packets on link type ${type}, which kcid does not decode, were skipped`);
  }
  if (analyzer.emptyConnections > 0) {
    notes.push(`${count(analyzer.emptyConnections)} connections to Kafka ports carried no Kafka message and are not listed`);
  }
  const unrecognisedNote = unrecognisedTcpNote(unrecognised, portBytes, analyzer.kafkaPorts);
  if (unrecognisedNote !== null) notes.push(unrecognisedNote);
  if (stats.truncatedPackets > 0) {
    notes.push(
      `${count(stats.truncatedPackets)} packets were cut short by the capture's snapshot length (tcpdump -s): their missing bytes are gaps, and requests inside them are not seen`,
    );
  }
  if (net.ipFragments > 0) notes.push(`${count(net.ipFragments)} IP fragments were skipped (kcid does not reassemble IP fragments)`);
  const unlisted = analyzer.unlisted;
  if (unlisted.connections > 0) {
    notes.push(
      `${count(unlisted.connections)} Kafka connections beyond the first ${count(analyzer.connections.length)} are counted but not listed or grouped into client instances (--max-connection-summaries)`,
    );
  }
  const unlistedFindings: [string, number][] = [];
  for (const [rule, n] of [...perRule].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))) {
    if (n > maxFindings) unlistedFindings.push([rule, n - maxFindings]);
  }
  if (unlistedFindings.length > 0) {
    const list = unlistedFindings.map(([rule, n]) => `${rule} ${count(n)}`).join(', ');
    notes.push(`findings beyond the first ${count(maxFindings)} of a rule are counted but not listed (--max-findings): ${list}`);
  }
  for (const source of tlsKeys.sources) {
    if (source.skipped > 0) notes.push(`${source.name}: ${count(source.skipped)} lines that are not NSS key log lines were skipped`);
    if (source.matched > 0) continue;
    keep(captureFinding(tlsKeylogUnmatched, `${source.name}: none of its ${count(source.entries)} TLS secrets matches a TLS connection of this capture`, null, inputIndex));
  }
  const telemetryEvents = analyzer.telemetry.finish();
  if (analyzer.telemetry.dropped > 0) {
    notes.push(`${count(analyzer.telemetry.dropped)} telemetry requests beyond the first ${count(telemetryEvents.length)} are not judged by the telemetry rules`);
  }
  if (stats.truncatedAtFrame > 0) {
    const message = `the capture ends in the middle of frame ${stats.truncatedAtFrame}; the frames before it were analysed`;
    keep(captureFinding(captureTruncated, message, stats.truncatedAtFrame, inputIndex));
  }
  const notListed =
    unlisted.connections > 0 || unlistedFindings.length > 0 ? { notListed: { ...unlisted, findings: unlistedFindings } } : {};
  return {
    input: {
      file,
      format: stats.format,
      gzip: stats.gzip,
      packets: stats.packets,
      bytes: stats.bytes,
      kafkaPorts: [...analyzer.kafkaPorts].sort((a, b) => a - b),
      tcpPackets: net.tcpPackets,
      nonTcpPackets: net.nonTcpPackets,
      unknownLinkTypePackets,
      malformedPackets: net.malformedPackets,
      truncatedPackets: stats.truncatedPackets,
      truncatedAtFrame: stats.truncatedAtFrame,
      damagedRecords: stats.damagedRecords,
      notes,
      startUs,
      ...notListed,
      ...(activity === null ? {} : { activity: activity.result() }),
    },
    connections: analyzer.connections.sort(compareConnections),
    findings,
    telemetry: telemetryEvents,
  };
}

/** A finding about the capture as a whole (no connection, request or time), at `frame` when it has one. */
function captureFinding(rule: RuleMeta, message: string, frame: number | null, input: number): Finding {
  return makeFinding(rule, message, {
    frame,
    timeUs: null,
    client: null,
    broker: null,
    apiKey: null,
    apiVersion: null,
    correlationId: null,
    clientInstanceId: null,
    input,
  });
}

/** Ports named in the note on TCP traffic kcid did not recognise, at most. */
const UNRECOGNISED_PORTS_NAMED = 3;

/**
 * "TCP traffic not recognised as Kafka: port 7000 (1 connection, 256,000 bytes), ...": the busiest
 * ports (by bytes, then connections) of connections left out as not Kafka, and how to make kcid read
 * them; null when every connection was Kafka. Bytes are every TCP payload byte to or from the port.
 */
export function unrecognisedTcpNote(unrecognised: ReadonlyMap<number, number>, portBytes: Float64Array, kafkaPorts: ReadonlySet<number>): string | null {
  const byPort = new Map<number, number>();
  for (const [key, n] of unrecognised) {
    let port = key;
    if (key >= 65536) {
      // Both ports of a connection without its SYN: a Kafka port (learned later) is the server's, else the lower.
      const a = Math.floor(key / 65536) - 1;
      const b = key % 65536;
      port = kafkaPorts.has(b) ? b : kafkaPorts.has(a) ? a : Math.min(a, b);
    }
    byPort.set(port, (byPort.get(port) ?? 0) + n);
  }
  const ports = [...byPort].map(([port, connections]) => ({ port, connections, bytes: portBytes[port] ?? 0 }));
  if (ports.length === 0) return null;
  ports.sort((x, y) => y.bytes - x.bytes || y.connections - x.connections || x.port - y.port);
  const count = (n: number): string => n.toLocaleString('en-US');
  const plural = (n: number, word: string): string => `${count(n)} ${word}${n === 1 ? '' : 's'}`;
  const named = ports.slice(0, UNRECOGNISED_PORTS_NAMED);
  const total = ports.reduce((sum, p) => sum + p.connections, 0);
  const more = ports.length > named.length ? `, and ${plural(ports.length - named.length, 'other port')}` : '';
  return (
    `${plural(total, 'TCP connection')} not recognised as Kafka: ` +
    named.map((p) => `port ${p.port} (${plural(p.connections, 'connection')}, ${plural(p.bytes, 'byte')})`).join(', ') +
    `${more}; if a port carries Kafka, list it with --port (for example --port ${named.map((p) => p.port).join(',')})`
  );
}
