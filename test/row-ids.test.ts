/**
 * A request row's two instance IDs (issue: rows true to the wire): `headerClientInstanceId` is what the
 * request header's tag 0 carried (null when it carried none), `clientInstanceId` the instance that owns
 * the request (the header's ID, else the connection's). NDJSON, Parquet and the table each show both.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { apiVersionsRequestBody, compactArray, concat, int16, int32, int8, taggedFields } from './builder/kafka.js';
import { Scenario } from './builder/scenario.js';
import { tmpDir } from './builder/capture.js';
import { useDuckDb } from './duckdb.js';
import { ID_A, ID_A_B64, runKcid } from './helpers.js';
import { API_KEY } from '../src/kafka/protocol.js';

const rows = useDuckDb();

/**
 * One connection: ApiVersions v4 with tag 0 = ID A (frame 4), answered (frame 5); Metadata v12 without tag 0
 * (frame 6, the client-instance-id-missing violation of header v2), answered (frame 7).
 */
function capture(): string {
  const s = new Scenario();
  const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
  const corr = c.request({ apiKey: API_KEY.ApiVersions, apiVersion: 4, clientId: 'orders', clientInstanceId: ID_A, body: apiVersionsRequestBody({ softwareName: 'kcid-test', softwareVersion: '1' }) });
  // ApiVersions v4 response: ErrorCode 0, ApiKeys (an empty compact array), ThrottleTimeMs 0, no tags.
  c.respond(corr, concat(int16(0), compactArray([], int8), int32(0), taggedFields()));
  // Metadata v12: Topics null, AllowAutoTopicCreation true, IncludeTopicAuthorizedOperations false, no tags.
  c.respond(c.request({ apiKey: API_KEY.Metadata, apiVersion: 12, clientInstanceId: null, body: concat(Uint8Array.of(0x00, 0x01, 0x00), taggedFields()) }));
  return s.file();
}

describe("a request row's header ID and owner", () => {
  it('NDJSON: the owner and what tag 0 carried, null on the request that lacked it', async () => {
    const r = await runKcid(['requests', capture(), '--format', 'ndjson']);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => [l['frame'], l['apiName'], l['clientInstanceId'], l['headerClientInstanceId']])).toEqual([
      [4, 'ApiVersions', ID_A_B64, ID_A_B64],
      [6, 'Metadata', ID_A_B64, null],
    ]);
  });

  it('Parquet: header_client_instance_id beside client_instance_id', async () => {
    const out = join(tmpDir(), 'requests.parquet');
    expect(await runKcid(['requests', capture(), '--format', 'parquet', '-o', out])).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(await rows(`SELECT frame, client_instance_id, header_client_instance_id FROM '${out}' ORDER BY frame`)).toEqual([
      { frame: '4', client_instance_id: ID_A_B64, header_client_instance_id: ID_A_B64 },
      { frame: '6', client_instance_id: ID_A_B64, header_client_instance_id: null },
    ]);
  });

  it("the table marks the inherited ID with '*' and says what it means", async () => {
    const r = await runKcid(['requests', capture()]);
    const lines = r.stdout.split('\n');
    expect(lines.filter((l) => l.includes(ID_A_B64)).map((l) => l.slice(l.indexOf(ID_A_B64), l.indexOf(ID_A_B64) + 23).trimEnd())).toEqual([ID_A_B64, `${ID_A_B64}*`]);
    expect(lines).toContain("* the request header carried no ClientInstanceId: the ID is its connection's (KIP-1313's connection context)");
  });
});
