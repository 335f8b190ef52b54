/**
 * Output safety: wire strings reach a terminal escaped (report/sanitize.ts), JSON and NDJSON stay
 * valid JSON with every value unchanged (escapes are JSON's, not kcid's), and wire strings that
 * name JavaScript object internals (__proto__, constructor) are data like any other.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { run, type Io } from '../src/cli/main.js';
import { sanitize } from '../src/base/sanitize.js';
import { removeTmpFiles } from './builder/capture.js';
import { apiVersionsRequestBody, concat, consumerGroupHeartbeatRequestBody, errorCodeResponseBody, int16, int32, sizePrefixed } from './builder/kafka.js';
import { runKcid } from './helpers.js';
import { Scenario } from './builder/scenario.js';
import { ID_A, ID_A_B64 } from './helpers.js';

afterAll(removeTmpFiles);

/** SGR red, an OSC window title ended by BEL, an 8-bit CSI (C1 0x9b), a right-to-left override, a NUL. */
const HOSTILE = 'evil\u001b[31mred\u001b]0;pwned\u0007\u009b2J\u202egnp.exe\u0000end';
/** What the table shows for it: every control and format character as a visible escape. */
const HOSTILE_SHOWN = 'evil\\x1b[31mred\\x1b]0;pwned\\x07\\x9b2J\\u{202e}gnp.exe\\x00end';
/** ClientId bytes that are not UTF-8: a lone continuation byte, 0xff, and a cut two-byte sequence. */
const INVALID_UTF8 = Uint8Array.of(0x61, 0x80, 0xff, 0x62, 0xc3);
const INVALID_DECODED = 'a\ufffd\ufffdb\ufffd';

/** Terminal-unsafe characters: C0 but newline, DEL, C1, bidi and zero-width format characters. */
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/;

async function kcid(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const r = { code: 0, out: '', err: '' };
  const io: Io = { stdout: { write: (s: string) => (r.out += s) }, stderr: { write: (s: string) => (r.err += s) }, env: { NO_COLOR: '1' } };
  r.code = await run(args, io);
  return r;
}

/** Four connections: a hostile ClientId and software name, invalid UTF-8, __proto__, constructor. */
function hostileCapture(): string {
  const s = new Scenario();
  const a = s.connect({ client: '10.0.0.1:50001', broker: '10.0.0.9:9092' });
  a.respond(
    a.request({ apiKey: 18, apiVersion: 3, clientId: HOSTILE, body: apiVersionsRequestBody({ softwareName: 'lib\u001b]2;x\u0007rd', softwareVersion: '1.0\u202e' }) }),
    errorCodeResponseBody({ errorCode: 0, flexible: false }),
  );
  // A KIP-1313 client whose MemberId is hostile: the member-id-mismatch message quotes it.
  a.request({ apiKey: 68, apiVersion: 0, clientId: null, clientInstanceId: ID_A, body: consumerGroupHeartbeatRequestBody(0, { groupId: 'g', memberId: '\u001b[2Jm', memberEpoch: 1 }) });
  a.close();
  const b = s.connect({ client: '10.0.0.2:50002', broker: '10.0.0.9:9092' });
  // ApiVersions v0 (header v1) written by hand: the ClientId's bytes are not UTF-8.
  b.clientBytes(sizePrefixed(concat(int16(18), int16(0), int32(1), int16(INVALID_UTF8.length), INVALID_UTF8)));
  b.close();
  for (const [i, clientId] of ['__proto__', 'constructor'].entries()) {
    const c = s.connect({ client: `10.0.0.${3 + i}:5000${3 + i}`, broker: '10.0.0.9:9092' });
    c.request({ apiKey: 18, apiVersion: 0, clientId });
    c.close();
  }
  return s.file('hostile.pcap');
}

describe('wire strings in the outputs', () => {
  const file = hostileCapture();

  it('sanitize writes control, C1 and format characters as escapes, and backslash doubled', () => {
    expect(sanitize(HOSTILE)).toBe(HOSTILE_SHOWN);
    expect(sanitize('a\\x1b')).toBe('a\\\\x1b');
    expect(sanitize('\u2066\u200b\ufeff\u061c\u2028\u007f')).toBe('\\u{2066}\\u{200b}\\u{feff}\\u{61c}\\u{2028}\\x7f');
    expect(sanitize('plain ClientId-1.0 日本')).toBe('plain ClientId-1.0 日本');
  });

  it('analyze (table): the ClientId, software name and MemberId appear escaped, nothing raw', async () => {
    const r = await kcid(['analyze', '--fail-on', 'none', file]);
    expect(r.code).toBe(0);
    expect(r.err).toBe('');
    expect(r.out).toContain(HOSTILE_SHOWN);
    expect(r.out).toContain('lib\\x1b]2;x\\x07rd 1.0\\u{202e}');
    expect(r.out).toContain('MemberId "\\x1b[2Jm" is not the client instance ID');
    expect(r.out).toContain(INVALID_DECODED);
    expect(r.out).toContain('__proto__');
    expect(r.out).toContain('constructor');
    expect(r.out.replace(/\n/g, '')).not.toMatch(UNSAFE);
  });

  it('analyze --format json: valid JSON, every value as the wire had it, no raw control character', async () => {
    const r = await kcid(['analyze', '--format', 'json', '--fail-on', 'none', file]);
    expect(r.code).toBe(0);
    expect(r.out.replace(/\n/g, '')).not.toMatch(UNSAFE);
    // C1 and format characters are \u escapes in the text, the JSON value is unchanged.
    expect(r.out).toContain('evil\\u001b[31mred\\u001b]0;pwned\\u0007\\u009b2J\\u202egnp.exe\\u0000end');
    const report = JSON.parse(r.out) as { instances: { clientIds: string[]; software: { name: string; version: string }[]; clientInstanceId: string | null }[] };
    expect(report.instances.map((i) => i.clientIds)).toEqual([[HOSTILE], [INVALID_DECODED], ['__proto__'], ['constructor']]);
    expect(report.instances[0]!.software).toEqual([{ name: 'lib\u001b]2;x\u0007rd', version: '1.0\u202e' }]);
    expect(report.instances[0]!.clientInstanceId).toBe(ID_A_B64);
    // Plain objects were not touched by the names: no prototype was replaced.
    expect(Object.getPrototypeOf(report.instances[2]!)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('requests --format ndjson: one JSON object per line, ClientIds unchanged', async () => {
    const r = await kcid(['requests', '--format', 'ndjson', file]);
    expect(r.code).toBe(0);
    expect(r.out.replace(/\n/g, '')).not.toMatch(UNSAFE);
    const rows = r.out.trimEnd().split('\n').map((l) => JSON.parse(l) as { clientId: string | null; apiKey: number });
    expect(rows.map((x) => x.clientId)).toEqual([HOSTILE, null, INVALID_DECODED, '__proto__', 'constructor']);
  });

  it('requests (table): the ClientId column is escaped, whole into a pipe, escaped before it is cut on a terminal', async () => {
    const r = await kcid(['requests', file]);
    expect(r.code).toBe(0);
    expect(r.out.replace(/\n/g, '')).not.toMatch(UNSAFE);
    expect(r.out).toContain(HOSTILE_SHOWN);
    expect(r.out).toContain(INVALID_DECODED);
    const tty = await runKcid(['requests', file], { tty: true, columns: 160, env: { NO_COLOR: '1' } });
    expect(tty.stdout.replace(/\n/g, '')).not.toMatch(UNSAFE);
    expect(tty.stdout).toMatch(/ evil\\x1b\[31mred\\x1b\]0;pwned\\x07\\x9b2J\\u…  /);
  });

  it.each([
    [['analyze', '--format', 'markdown'], true],
    [['analyze', '--format', 'junit'], false],
    [['clients'], true],
  ])('%j: nothing raw, wire strings escaped', async (args, showsClientId) => {
    const r = await kcid(args[0] === 'clients' ? [...args, file] : [...args, '--fail-on', 'none', file]);
    expect(r.code).toBe(0);
    expect(r.out.replace(/\n/g, '')).not.toMatch(UNSAFE);
    if (showsClientId) expect(r.out).toContain('evil\\x1b[31mred\\x1b]0;pwned\\x07\\x9b2J');
  });

  it.each([
    [['analyze', '--format', 'sarif', '--fail-on', 'none']],
    [['analyze', '--format', 'summary-json', '--fail-on', 'none']],
    [['analyze', '--format', 'ndjson', '--fail-on', 'none']],
    [['clients', '--format', 'json']],
  ])('%j: valid JSON, no raw control character, the ClientId unchanged inside', async (args) => {
    const r = await kcid([...args, file]);
    expect(r.code).toBe(0);
    expect(r.out.replace(/\n/g, '')).not.toMatch(UNSAFE);
    const docs = args.includes('ndjson') ? r.out.trimEnd().split('\n').map((l) => JSON.parse(l) as unknown) : [JSON.parse(r.out) as unknown];
    // Wire values survive as they were, wherever the format puts them (messages quote them escaped).
    const strings: string[] = [];
    const walk = (v: unknown): void => {
      if (typeof v === 'string') strings.push(v);
      else if (Array.isArray(v)) v.forEach(walk);
      else if (v !== null && typeof v === 'object') Object.values(v).forEach(walk);
    };
    docs.forEach(walk);
    if (!args.includes('ndjson') && !args.includes('sarif')) expect(strings).toContain(HOSTILE);
  });

  it('invalid UTF-8 in a ClientId is reported, with the offending request', async () => {
    const r = await kcid(['analyze', '--format', 'json', '--fail-on', 'none', file]);
    const report = JSON.parse(r.out) as { findings: { rule: string; message: string; client: string }[] };
    expect(report.findings.filter((f) => f.rule === 'malformed-request-header').map((f) => [f.client, f.message])).toEqual([
      ['10.0.0.2:50002', 'ClientId is not valid UTF-8'],
    ]);
  });
});
