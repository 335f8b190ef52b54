/**
 * The thread that encodes an export's Parquet: one per process, started with the first file, shared
 * by every file written after it.
 *
 * Why a thread: hyparquet-writer turns each row group into many short-lived arrays (levels,
 * statistics, dictionaries, pages). On the thread that also holds the capture's analysis (100,000
 * connections on chatty), that garbage made V8 either let the heap grow 100-170 MB past
 * `kcid requests --format ndjson`'s, or, with a full collection after every row group to bound it,
 * mark the analysis's live heap 28 times (3-5 CPU seconds of chatty's 17). In a thread of its own
 * the encoder's live heap is one row group, so a full collection after each group is cheap and
 * keeps that heap flat (collect.ts), and the analysis runs on meanwhile (two cores).
 *
 * The writers stay synchronous: a row group is posted (its typed arrays transferred, its other
 * values cloned), and the caller goes on unless {@link MAX_IN_FLIGHT} groups are still unencoded,
 * when it waits (Atomics.wait on the shared count of handled messages): memory holds at most that
 * many groups whatever the capture's size. finish and abort wait for their answer, so a file is
 * complete, or no longer written to, when they return. A failure comes back on a reply port,
 * read without the event loop (receiveMessageOnPort).
 *
 * The thread's death (out of its heap, a native fault) is noticed at once, with its cause: the
 * main thread waits without its event loop (it reads a capture in one go), where a Worker's
 * 'error' and 'exit' events never arrive, so the encoder is started by a small watchdog thread
 * that has nothing else to do. The watchdog hears those events, posts the cause on a port the
 * main thread reads synchronously, raises a flag in the shared state and wakes the waiting
 * thread; a wait then fails within milliseconds with the cause, where it used to stall for a
 * minute per wait and say only that the thread stopped answering.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort, type TransferListItem } from 'node:worker_threads';
import type { KeyValue, SchemaElement } from 'hyparquet-writer';
import { collectIfGrown } from './collect.js';
import { drop, handle } from './encode-group.js';
import { DONE, type EncoderFailure, type EncoderMessage, type GroupColumn } from './encoder-protocol.js';
import { ExportError } from './errors.js';

// From src/export (tests) and from the bundle in dist/cli alike: dist/export/encoder-worker.mjs.
const WORKER = new URL('../../dist/export/encoder-worker.mjs', import.meta.url);

/** Row groups posted and not yet encoded before a writer waits (more held more memory and gained nothing measurable). */
export const MAX_IN_FLIGHT = 1;
/**
 * The encoder thread's young generation: its garbage is all short-lived, and a smaller one kept
 * the process's peak RSS lower on chatty (8 MB and the default left it 10-20 MB higher).
 */
const YOUNG_MB = 4;
/**
 * Its old generation's limit, which makes V8 keep that heap small rather than let it grow (13 MB
 * less peak RSS on chatty than without). What it holds is one row group's encoding: at most
 * ROW_GROUP_BYTES of values and their arrays, 10-25 MB measured on chatty.
 */
const OLD_MB = 64;
/** A thread that handles nothing for this long has stopped (it never takes more than a second or two for a group). */
const STALLED_MS = 60_000;
/** Index in the shared state (after the protocol's DONE) of the flag the watchdog raises when the encoder thread has ended. */
const DEAD = 1;
/**
 * The watchdog thread (evaluated code, so that it needs no file of its own): starts the encoder
 * with the main thread's ports, and reports its end. Its heap holds this code alone.
 */
const WATCHDOG = `
const { Worker, workerData } = require('node:worker_threads');
const { url, state, replies, port, deaths, resourceLimits } = workerData;
const encoder = new Worker(new URL(url), { workerData: { state, replies, port }, transferList: [replies, port], resourceLimits });
let cause = null;
encoder.on('error', (e) => { cause = (e && e.message) || String(e); });
encoder.on('exit', (code) => {
  deaths.postMessage(cause === null ? 'exited with code ' + code : cause);
  Atomics.store(state, ${DEAD}, 1);
  Atomics.notify(state, ${DONE});
});
`;
const WATCHDOG_LIMITS = { maxYoungGenerationSizeMb: 1, maxOldGenerationSizeMb: 16 };

export interface Encoder {
  open(fd: number, schema: SchemaElement[], kvMetadata: KeyValue[] | undefined, createdBy: string | undefined): number;
  group(id: number, rows: number, columns: GroupColumn[], transfer: TransferListItem[]): void;
  finish(id: number): void;
  abort(id: number): void;
  /** The thread behind it has ended: files opened from now on need another encoder. */
  readonly ended: boolean;
}

class ThreadEncoder implements Encoder {
  private readonly worker: Worker;
  private readonly state = new Int32Array(new SharedArrayBuffer(8));
  private readonly replies: MessagePort;
  /** The encoder thread's port (it listens on the other end). */
  private readonly port: MessagePort;
  /** Where the watchdog posts why the encoder thread ended. */
  private readonly deaths: MessagePort;
  private readonly failures = new Map<number, EncoderFailure>();
  private sent = 0;
  private nextId = 1;
  private exited: string | null = null;

  constructor() {
    const replies = new MessageChannel();
    const messages = new MessageChannel();
    const deaths = new MessageChannel();
    this.replies = replies.port1;
    this.port = messages.port1;
    this.deaths = deaths.port1;
    for (const p of [this.replies, this.port, this.deaths]) p.unref();
    const workerData = { url: WORKER.href, state: this.state, replies: replies.port2, port: messages.port2, deaths: deaths.port2, resourceLimits: { maxYoungGenerationSizeMb: YOUNG_MB, maxOldGenerationSizeMb: OLD_MB } };
    this.worker = new Worker(WATCHDOG, { eval: true, workerData, transferList: [replies.port2, messages.port2, deaths.port2], resourceLimits: WATCHDOG_LIMITS });
    this.worker.unref();
    this.worker.on('error', (e) => {
      this.exited = e.message;
    });
    this.worker.on('exit', (code) => {
      this.exited ??= `exited with ${code}`;
    });
  }

  open(fd: number, schema: SchemaElement[], kvMetadata: KeyValue[] | undefined, createdBy: string | undefined): number {
    const id = this.nextId++;
    this.post({ op: 'open', id, fd, schema, kvMetadata, createdBy });
    return id;
  }

  group(id: number, rows: number, columns: GroupColumn[], transfer: TransferListItem[]): void {
    this.post({ op: 'group', id, rows, columns }, transfer);
    this.wait(MAX_IN_FLIGHT);
    this.check(id);
  }

  /** Writes the file's footer; returns when it is written. */
  finish(id: number): void {
    this.post({ op: 'finish', id });
    this.wait(0);
    this.check(id);
  }

  /** Gives the file up; returns when nothing more will be written to it. */
  abort(id: number): void {
    if (this.exited !== null || this.dead()) return;
    this.post({ op: 'abort', id });
    this.wait(0);
    this.failures.delete(id);
  }

  private post(m: EncoderMessage, transfer: TransferListItem[] = []): void {
    if (this.exited !== null || this.dead()) throw this.stopped();
    this.port.postMessage(m, transfer);
    this.sent++;
  }

  /** Blocks until at most `pending` messages are unhandled. */
  private wait(pending: number): void {
    const target = this.sent - pending;
    let done = Atomics.load(this.state, DONE);
    let since = Date.now();
    while (done < target) {
      if (this.dead()) throw this.stopped();
      Atomics.wait(this.state, DONE, done, 1000);
      const now = Atomics.load(this.state, DONE);
      if (now !== done) {
        done = now;
        since = Date.now();
      } else if (Date.now() - since > STALLED_MS) {
        throw new ExportError('the Parquet encoder thread stopped answering');
      }
    }
    for (let m = receiveMessageOnPort(this.replies); m !== undefined; m = receiveMessageOnPort(this.replies)) {
      const f = m.message as EncoderFailure;
      this.failures.set(f.id, f);
    }
  }

  get ended(): boolean {
    return this.exited !== null || this.dead();
  }

  /** The watchdog has seen the encoder thread end (its cause is then on the deaths port). */
  private dead(): boolean {
    if (Atomics.load(this.state, DEAD) === 0) return false;
    if (this.exited === null) {
      const m = receiveMessageOnPort(this.deaths);
      this.exited = m === undefined ? 'it ended' : String(m.message);
    }
    return true;
  }

  private stopped(): ExportError {
    return new ExportError(`the Parquet encoder thread stopped: ${this.exited}`);
  }

  private check(id: number): void {
    const f = this.failures.get(id);
    if (f === undefined) return;
    this.failures.delete(id);
    const e = new Error(f.message) as NodeJS.ErrnoException;
    if (f.code !== null) e.code = f.code;
    throw e;
  }
}

/** Encodes on the calling thread, with a full collection when its heap has grown (collect.ts): where the bundled thread is missing (the source run without a build). */
class InlineEncoder implements Encoder {
  private nextId = 1;
  readonly ended = false;

  open(fd: number, schema: SchemaElement[], kvMetadata: KeyValue[] | undefined, createdBy: string | undefined): number {
    const id = this.nextId++;
    handle({ op: 'open', id, fd, schema, kvMetadata, createdBy });
    return id;
  }

  group(id: number, rows: number, columns: GroupColumn[]): void {
    this.run({ op: 'group', id, rows, columns });
    collectIfGrown();
  }

  finish(id: number): void {
    this.run({ op: 'finish', id });
  }

  abort(id: number): void {
    drop(id);
  }

  private run(m: EncoderMessage): void {
    try {
      handle(m);
    } catch (e) {
      drop(m.id);
      throw e;
    }
  }
}

let shared: Encoder | null = null;

/** The encoder for a new file: the shared one, or a new one when its thread has ended (the files it had failed with the cause). */
export function encoder(): Encoder {
  if (shared?.ended === true) shared = null;
  return (shared ??= existsSync(fileURLToPath(WORKER)) ? new ThreadEncoder() : new InlineEncoder());
}
