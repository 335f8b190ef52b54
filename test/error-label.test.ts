import { describe, expect, it } from 'vitest';
import { errorLabel } from '../src/kafka/protocol.js';
import { Scenario } from './builder/scenario.js';
import { apiVersionsRequestBody, errorCodeResponseBody } from './builder/kafka.js';
import { runKcid } from './helpers.js';

describe('errorLabel', () => {
  it.each([
    [0, 'NONE (0)'],
    [-1, 'UNKNOWN_SERVER_ERROR (-1)'],
    [35, 'UNSUPPORTED_VERSION (35)'],
    [42, 'INVALID_REQUEST (42)'],
    [999, 'unknown error code (999)'],
    [-32768, 'unknown error code (-32768)'],
  ])('%i is %s', (code, label) => {
    expect(errorLabel(code)).toBe(label);
  });
});

describe('error codes by name and number everywhere', () => {
  it('the page timeline says error UNSUPPORTED_VERSION (35), as the tables do', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.2.0.21:40000', broker: '10.1.0.11:9092' });
    c.respond(c.request({ apiKey: 18, apiVersion: 3, clientId: 'app', body: apiVersionsRequestBody({ softwareName: 'java', softwareVersion: '1' }) }), errorCodeResponseBody({ errorCode: 35, flexible: false }));
    const file = s.file('unsupported.pcap');
    const page = (await runKcid(['analyze', file, '--format', 'html', '--fail-on', 'none'])).stdout;
    expect(page).toContain('error UNSUPPORTED_VERSION (35), 100 µs');
    expect(page).not.toContain('error 35 UNSUPPORTED_VERSION');
    expect((await runKcid(['requests', file])).stdout).toContain('UNSUPPORTED_VERSION (35)');
  });
});
