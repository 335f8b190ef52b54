/**
 * --follow prints each finding when its evidence is complete: the checks across connections (the
 * telemetry rules, instance-id-multiple-*) too, not at the end of input, and each only once.
 */
import { describe, expect, it } from 'vitest';
import { apiVersionsRequestBody } from './builder/kafka.js';
import { Scenario } from './builder/scenario.js';
import { TelemetryClient } from './telemetry/client.js';
import { ID_A, ID_A_B64, ID_C, ID_C_B64, runKcid } from './helpers.js';
import { API_KEY } from '../src/kafka/protocol.js';

/**
 * Frames 1-3: connection A's handshake (10.0.0.1, ID A); 4-5 its GetTelemetrySubscriptions (interval
 * 1 s) and answer; 6-7 a push 1 s later, answered; 8-9 a push 0.3 s after it, answered NONE
 * (telemetry-push-too-soon and broker-accepted-early-push, at the push's frame 8). Frames 10-13:
 * connection B from another host (10.0.0.3) with ID A, its ApiVersions at 13 (instance-id-multiple-hosts).
 * Frames 14-18: connection C, whose second request (18) lacks tag 0 (client-instance-id-missing): a
 * finding made at once, at the end of the capture.
 */
async function capture(): Promise<string> {
  const s = new Scenario();
  const a = new TelemetryClient(s);
  a.subscribe();
  s.wait(1);
  await a.push();
  s.wait(0.3);
  await a.push();
  s.wait(1);
  const b = s.connect({ client: '10.0.0.3:40000', broker: '10.0.0.2:9092' });
  b.request({ apiKey: API_KEY.ApiVersions, apiVersion: 4, clientId: 'orders', clientInstanceId: ID_A, body: apiVersionsRequestBody({ softwareName: 'x', softwareVersion: '1' }) });
  s.wait(1);
  const c = s.connect({ client: '10.0.0.5:40000', broker: '10.0.0.2:9092' });
  c.request({ apiKey: API_KEY.ApiVersions, apiVersion: 4, clientId: 'late', clientInstanceId: ID_C, body: apiVersionsRequestBody({ softwareName: 'x', softwareVersion: '1' }) });
  c.request({ apiKey: API_KEY.ApiVersions, apiVersion: 4, clientId: null, clientInstanceId: null, body: apiVersionsRequestBody({ softwareName: 'x', softwareVersion: '1' }) });
  return s.file();
}

describe('analyze --follow: findings across connections as their evidence completes', () => {
  it('prints telemetry and instance findings in capture order, before later ones, each once, and counts each once', async () => {
    const file = await capture();
    const r = await runKcid(['analyze', file, '--follow', '--format', 'ndjson']);
    expect(r.stderr).toBe('');
    const objects = r.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(objects.map((o) => (o['summary'] === undefined ? [o['rule'], o['frame'], o['clientInstanceId']] : 'summary'))).toEqual([
      ['telemetry-push-too-soon', 8, ID_A_B64],
      ['broker-accepted-early-push', 8, ID_A_B64],
      ['instance-id-multiple-hosts', 13, ID_A_B64],
      ['client-instance-id-missing', 18, ID_C_B64],
      'summary',
    ]);
    // The report at the end judges the same evidence: the same findings, counted once.
    const whole = JSON.parse((await runKcid(['analyze', file, '--format', 'json'])).stdout) as { findings: { rule: string; frame: number; message: string }[] };
    const live = objects.filter((o) => o['summary'] === undefined).map((o) => [o['rule'], o['frame'], o['message']]);
    expect(live.map(String).sort()).toEqual(whole.findings.map((f) => [f.rule, f.frame, f.message]).map(String).sort());
    expect(objects.at(-1)).toEqual({ summary: { connections: 3, requests: 6, responses: 3, instances: 2, findings: { error: 1, warning: 3, info: 0 } } });
  });
});
