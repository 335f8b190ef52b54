/**
 * `kcid show CAPTURE... FRAME`: every Kafka message that ends in FRAME (`input:frame` when several
 * captures are given, as the findings tables number them), as a tree of fields with byte ranges and a
 * hex dump (src/show/). Self-contained: {@link planShow} turns the command line into a plan (pure),
 * {@link runShow} runs it, {@link registerShow} adds the command to the program.
 */
import { readFileSync } from 'node:fs';
import { Option, type Command } from 'commander';
import { sanitize } from '../base/sanitize.js';
import { activateProtocol, type Kip1313Revision } from '../kafka/protocol.js';
import { parseApis } from '../analysis/filters.js';
import { DEFAULT_KAFKA_PORTS } from '../analysis/run.js';
import { EXIT_CLEAN, type Io } from './io.js';
import { parsePorts, UsageError } from './options.js';
import { Out } from './output.js';

export interface ShowCliOptions {
  format: string;
  field?: string;
  payload?: boolean;
  api?: string;
  correlationId?: string;
  client?: string;
  port?: string;
  kafkaSpecs?: string;
  kip1313?: string;
  output?: string;
  tlsKeylog?: string[];
}

export interface ShowPlan {
  readonly capture: string;
  /** "42", or "2:42" with several captures. */
  readonly frameText: string;
  readonly frame: number;
  readonly format: 'text' | 'json';
  readonly field: string | null;
  readonly payload: boolean;
  readonly apis: ReadonlySet<number> | null;
  readonly correlationId: number | null;
  readonly client: string | null;
  readonly kafkaPorts: ReadonlySet<number>;
  readonly kafkaSpecs: string | null;
  readonly kip1313: Kip1313Revision;
  readonly output: string | undefined;
  readonly tlsKeylogs: readonly string[];
}

/** The plan of a `kcid show` command line; throws UsageError for a bad one. */
export function planShow(args: readonly string[], o: ShowCliOptions): ShowPlan {
  if (args.length < 2) throw new UsageError('kcid show needs a capture and a frame: kcid show CAPTURE FRAME (input:frame with several captures)');
  const captures = args.slice(0, -1);
  const frameText = args[args.length - 1]!;
  const m = /^(?:(\d{1,6}):)?(\d{1,12})$/.exec(frameText);
  if (m === null) throw new UsageError(`invalid frame '${frameText}' (expected a frame number such as 42, or input:frame such as 2:42)`);
  const input = m[1] === undefined ? 1 : Number(m[1]);
  if (m[1] === undefined && captures.length > 1) throw new UsageError(`frame '${frameText}' with ${captures.length} captures: say which, as input:frame (1:${frameText} to ${captures.length}:${frameText})`);
  if (input < 1 || input > captures.length) throw new UsageError(`input ${input} in '${frameText}': there ${captures.length === 1 ? 'is 1 capture' : `are ${captures.length} captures`}`);
  const frame = Number(m[2]);
  if (frame < 1 || !Number.isSafeInteger(frame)) throw new UsageError(`invalid frame '${frameText}' (frames are numbered from 1)`);
  if (o.format !== 'text' && o.format !== 'json') throw new UsageError(`invalid --format '${o.format}' (expected text or json)`);
  let correlationId: number | null = null;
  if (o.correlationId !== undefined) {
    if (!/^-?\d{1,10}$/.test(o.correlationId) || Number(o.correlationId) < -(2 ** 31) || Number(o.correlationId) >= 2 ** 31) throw new UsageError(`invalid --correlation-id '${o.correlationId}' (an int32)`);
    correlationId = Number(o.correlationId);
  }
  let apis: Set<number> | null = null;
  if (o.api !== undefined) {
    try {
      apis = parseApis(o.api);
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
  }
  return {
    capture: captures[input - 1]!,
    frameText: captures.length > 1 ? `${input}:${frame}` : String(frame),
    frame,
    format: o.format,
    field: o.field ?? null,
    payload: o.payload === true,
    apis,
    correlationId,
    client: o.client ?? null,
    kafkaPorts: o.port === undefined ? new Set(DEFAULT_KAFKA_PORTS) : parsePorts(o.port),
    kafkaSpecs: o.kafkaSpecs ?? null,
    kip1313: o.kip1313 === 'accepted' ? 'accepted' : 'voting',
    output: o.output,
    tlsKeylogs: o.tlsKeylog ?? [],
  };
}

export async function runShow(plan: ShowPlan, io: Io): Promise<number> {
  const p = activateProtocol({ kafkaSpecs: plan.kafkaSpecs, kip1313: plan.kip1313 });
  const { locate, endpointText } = await import('../show/locate.js');
  const { messageTree, saslTokenTree } = await import('../show/message.js');
  const { renderJson, renderText } = await import('../show/render.js');
  const { KeyLog } = await import('../tls/keylog.js');
  const keys = new KeyLog();
  for (const path of plan.tlsKeylogs) {
    let text: string;
    try {
      text = readFileSync(path, 'latin1');
    } catch (e) {
      throw new UsageError(`--tls-keylog ${path}: ${(e as NodeJS.ErrnoException).code ?? 'cannot be read'}`);
    }
    keys.add(path, text);
  }
  const found = await locate(plan.capture, plan.frame, p, plan.kafkaPorts, keys);
  const shown = found.messages
    .map((at) => ({ at, tree: at.saslToken ? saslTokenTree(at.kind, at.bytes, at.avail) : messageTree(at.kind, at.bytes, at.avail, p, at.request, { payload: plan.payload, tokens: at.tokens }) }))
    .filter(({ at, tree }) => {
      if (plan.apis !== null && (tree.apiKey === null || !plan.apis.has(tree.apiKey))) return false;
      if (plan.correlationId !== null && tree.correlationId !== plan.correlationId) return false;
      if (plan.client !== null) {
        const c = endpointText(at.client);
        if (c !== plan.client && at.client.ip !== plan.client && tree.clientId !== plan.client) return false;
      }
      return true;
    });
  if (found.packets < plan.frame) throw new UsageError(`frame ${plan.frameText}: ${sanitize(plan.capture)} has ${found.packets} frame${found.packets === 1 ? '' : 's'}`);
  const notes = [...found.notes];
  if (shown.length < found.messages.length) notes.push(`${found.messages.length - shown.length} of the ${found.messages.length} messages ending in this frame are left out by --api, --correlation-id or --client`);
  const out = new Out(io.stdout, plan.output);
  out.write(plan.format === 'json' ? renderJson(plan.capture, plan.frameText, shown, notes, p) : renderText(plan.capture, plan.frameText, shown, notes, p, { field: plan.field }));
  out.close();
  return EXIT_CLEAN;
}

/** Adds `kcid show` to the program; `done` gets the exit code. */
export function registerShow(program: Command, io: Io, done: (code: number) => void): void {
  program
    .command('show')
    .description('Every Kafka message ending in one frame, field by field with byte ranges, and its bytes (like tshark -V -x)')
    .argument('<capture-and-frame...>', 'a capture (or several) and a frame number (input:frame with several captures)')
    .addOption(new Option('-f, --format <format>', 'output format').choices(['text', 'json']).default('text'))
    .option('--field <path>', "mark only this field's bytes in the hex dump (a path as the tree shows it, e.g. Topics[0].Name)")
    .option('--payload', 'show record keys, values and header values (never shown by default)')
    .option('--api <apis>', 'only messages of these APIs (names or keys)')
    .option('--correlation-id <id>', 'only messages with this correlation id')
    .option('--client <client>', 'only messages of this client (address, host:port or ClientId)')
    .option('--tls-keylog <file>', 'NSS key log (SSLKEYLOGFILE) to decrypt TLS connections with; repeatable. A secret: never printed', (v: string, prev: string[] = []) => [...prev, v])
    .option('-p, --port <ports>', `Kafka broker ports, comma-separated (default: ${DEFAULT_KAFKA_PORTS.join(',')})`)
    .option('--kafka-specs <path>', "decode with your Kafka's message schemas: a folder of its common/message JSON files or a kafka-clients jar")
    .addOption(new Option('--kip-1313 <revision>', 'the KIP-1313 revision request headers are read by').choices(['voting', 'accepted']).default('voting'))
    .option('-o, --output <file>', 'write to this file instead of stdout')
    .action(async (args: string[], o: ShowCliOptions) => {
      done(await runShow(planShow(args, o), io));
    });
}
