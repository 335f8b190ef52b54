/**
 * kcid show, second reading (review-show): cases a review's experiments found wrong, each a failing
 * test before its fix.
 */
import { describe, expect, it } from 'vitest';
import { array, concat, int16, int32, string } from './builder/kafka.js';
import { Scenario } from './builder/scenario.js';
import { runKcid } from './helpers.js';

const enc = new TextEncoder();

describe('kcid show, review cases', () => {
  it('SaslHandshake v0: the headerless PLAIN token that follows is a secret, shown as its length, masked in the hex dump', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    const hc = c.request({ apiKey: 17, apiVersion: 0, clientId: 'app', body: string('PLAIN') });
    c.respond(hc, concat(int16(0), array(['PLAIN'], string)));
    // KIP-43: after a v0 handshake the token travels bare: size, then authzid NUL user NUL password.
    const token = enc.encode('\0alice\0hunter2-password');
    c.clientBytes(concat(int32(token.length), token));
    const tokenFrame = s.frames.length;
    c.serverBytes(int32(0));
    const answerFrame = s.frames.length;
    // The next request is framed as a request again.
    c.request({ apiKey: 3, apiVersion: 1, correlationId: 2, clientId: 'app', body: array(['t'], string) });
    const nextFrame = s.frames.length;
    const file = s.file();
    for (const format of ['text', 'json']) {
      const r = await runKcid(['show', file, String(tokenFrame), '--format', format]);
      expect(r.code).toBe(0);
      for (const leak of ['hunter2', 'alice', Buffer.from('hunter2').toString('hex'), '68 75 6e 74']) expect(r.stdout, format).not.toContain(leak);
    }
    const doc = JSON.parse((await runKcid(['show', file, String(tokenFrame), '--format', 'json'])).stdout) as { messages: { kind: string; error: unknown; tree: { children: { path: string; offset: number; length: number; type: string; value: unknown; hidden?: string }[] } }[] };
    const msg = doc.messages[0]!;
    expect(msg.kind).toBe('request');
    expect(msg.error).toBeNull();
    expect(msg.tree.children.map((n) => [n.path, n.offset, n.length, n.type, n.value, n.hidden ?? null])).toEqual([
      ['size', 0, 4, 'int32', token.length, null],
      ['token', 4, token.length, 'bytes', `${token.length} bytes`, 'secret'],
    ]);
    const text = (await runKcid(['show', file, String(tokenFrame)])).stdout;
    expect(text).toContain('SASL token');
    expect(text).toMatch(/0000 \|00 00 00 17\|\*\* \*\* .*\.\.\.\.\*\*\*\*/);
    const answer = JSON.parse((await runKcid(['show', file, String(answerFrame), '--format', 'json'])).stdout) as typeof doc;
    expect(answer.messages[0]!.kind).toBe('response');
    expect(answer.messages[0]!.tree.children.map((n) => [n.path, n.length])).toEqual([['size', 4], ['token', 0]]);
    const next = JSON.parse((await runKcid(['show', file, String(nextFrame), '--format', 'json'])).stdout) as { messages: { apiKey: number; error: unknown }[] };
    expect(next.messages.map((m) => [m.apiKey, m.error])).toEqual([[3, null]]);
  });
});
