/**
 * The CI formats: JUnit XML, SARIF 2.1.0, Markdown, NDJSON. Golden output for the KIP-1313 mix
 * fixture (UPDATE_GOLDEN=1 writes it again; review the diff), validation against the published
 * schemas (test/schemas/README.md says where they come from), and hostile wire strings that must
 * stay escaped in every format.
 */
import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { pathToFileURL } from 'node:url';
import Ajv from 'ajv-draft-04';
import addFormats from 'ajv-formats';
import { XmlDocument, XsdValidator } from 'libxml2-wasm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyBaseline, fingerprintAll, parseBaseline } from '../src/analysis/baseline.js';
import type { Report } from '../src/analysis/report.js';
import { RULES } from '../src/analysis/rules/index.js';
import type { Finding } from '../src/analysis/types.js';
import { findingJson, renderJson, reportJson, showCommand } from '../src/report/json.js';
import { safeJson } from '../src/base/json-text.js';
import { renderJunit, xmlEscape } from '../src/report/junit.js';
import { code, MAX_ROWS, plain, renderMarkdown } from '../src/report/markdown.js';
import { renderFindingsNdjson } from '../src/report/ndjson.js';
import { sanitize } from '../src/base/sanitize.js';
import { fileUri, renderSarif } from '../src/report/sarif.js';
import { removeTmpFiles, tmpFile } from './builder/capture.js';
import { apiVersionsRequestBody, consumerGroupHeartbeatRequestBody, errorCodeResponseBody } from './builder/kafka.js';
import { Scenario } from './builder/scenario.js';
import { analyzeFiles, checkGolden, ID_A, ID_A_B64 } from './helpers.js';

const MIX = 'fixtures/kip1313-mix.pcapng';
// ---- schema validators ----

/** --fail-on warning: warnings and errors are failed test cases. */
const WARNINGS_FAIL = { failOn: 'warning' } as const;

const JUNIT_XSD = readFileSync(new URL('./schemas/jenkins-junit-4.xsd', import.meta.url), 'utf8');
const SARIF_SCHEMA = JSON.parse(readFileSync(new URL('./schemas/sarif-2.1.0-rtm.5.json', import.meta.url), 'utf8')) as object;

let xsdDoc: XmlDocument;
let xsd: XsdValidator;
beforeAll(() => {
  xsdDoc = XmlDocument.fromString(JUNIT_XSD);
  xsd = XsdValidator.fromDoc(xsdDoc);
});
afterAll(() => {
  xsd.dispose();
  xsdDoc.dispose();
  removeTmpFiles();
});

/** Parses and validates against the Jenkins JUnit schema; throws with libxml2's message when invalid. */
function junitDoc(xml: string): XmlDocument {
  const doc = XmlDocument.fromString(xml);
  xsd.validate(doc);
  return doc;
}

// The rtm.5 schema's "language" pattern has a stray ']' that is an error in a Unicode regex: compile
// its patterns without the u flag, as draft-04 validators did.
// Both packages are CommonJS with the class (plugin) also on .default, the name NodeNext types see.
const ajv = new Ajv.default({ allErrors: true, strict: false, unicodeRegExp: false });
addFormats.default(ajv);
const validateSarif = ajv.compile(SARIF_SCHEMA);

function sarifErrors(text: string): unknown[] {
  return validateSarif(JSON.parse(text)) ? [] : (validateSarif.errors ?? []);
}

// ---- reports ----

let mix: Report;
beforeAll(async () => {
  mix = await analyzeFiles([MIX]);
});

/** A copy of a report with other findings, counts recomputed. */
function withFindings(report: Report, findings: Finding[]): Report {
  const counts = { error: 0, warning: 0, info: 0 };
  for (const f of findings) counts[f.severity]++;
  return { ...report, findings, counts: { ...report.counts, findings: counts } };
}

/** ESC sequences, NUL, XML and CDATA terminators, a table pipe, backticks, a mention, a link and HTML. */
const HOSTILE_CLIENT_ID = 'evil\x1b]0;pwned\x07\x00</failure>]]>|`x``y` @org/team [a](http://e.test) <img src=x>&amp;';
const HOSTILE_MEMBER_ID = '</system-out>\r\n|``|';
const HOSTILE_FILE = 'cap<&>|`\x1b[2J`.pcap';

/** One KIP-1313 client repeating a hostile ClientId and sending a hostile MemberId. */
async function hostileReport(): Promise<{ report: Report; file: string }> {
  const s = new Scenario();
  const c = s.connect({ client: '10.9.0.1:50000', broker: '10.1.0.11:9092' });
  c.respond(
    c.request({ apiKey: 18, apiVersion: 4, clientId: HOSTILE_CLIENT_ID, clientInstanceId: ID_A, body: apiVersionsRequestBody({ softwareName: 'sw|`x`', softwareVersion: '<1>' }) }),
    errorCodeResponseBody({ errorCode: 0, flexible: false }),
  );
  c.request({
    apiKey: 68,
    apiVersion: 0,
    clientId: HOSTILE_CLIENT_ID,
    clientInstanceId: ID_A,
    body: consumerGroupHeartbeatRequestBody(0, { groupId: 'g', memberId: HOSTILE_MEMBER_ID, memberEpoch: 1 }),
  });
  c.close();
  const file = tmpFile(HOSTILE_FILE, s.pcap());
  return { report: await analyzeFiles([file]), file };
}

describe('the schema validators', () => {
  it('reject what the schemas forbid (so a pass means something)', () => {
    expect(() => junitDoc('<testsuites><testsuite tests="1"><testcase name="x"/></testsuite></testsuites>')).toThrow(
      "Element 'testsuite': The attribute 'name' is required but missing.",
    );
    expect(() => junitDoc('<testsuites><testsuite name="a" tests="1"><testcase name="x"><failure/><skipped/></testcase></testsuite></testsuites>')).toThrow(
      "Element 'skipped': This element is not expected.",
    );
    const log = JSON.parse(renderSarif(mix, '9.9.9')) as { runs: { results: Record<string, unknown>[] }[] };
    delete log.runs[0]!.results[0]!.message;
    log.runs[0]!.results[1]!.level = 'fatal';
    expect(sarifErrors(JSON.stringify(log)).map((e) => (e as { instancePath: string; message: string }).instancePath + ' ' + (e as { message: string }).message)).toEqual([
      "/runs/0/results/0 must have required property 'message'",
      '/runs/0/results/1/level must be equal to one of the allowed values',
    ]);
  });
});

describe('junit', () => {
  // Most tests here are about the XML itself: they count warnings as failures, as --fail-on warning does.
  it('renders the mix fixture as the golden XML, valid against the Jenkins JUnit schema', () => {
    const xml = renderJunit(mix, WARNINGS_FAIL);
    checkGolden('kip1313-mix.junit.xml', xml);
    junitDoc(xml).dispose();
  });

  it('has one testcase per rule, and suite counts that match its testcases', () => {
    const doc = junitDoc(renderJunit(mix, WARNINGS_FAIL));
    expect(RULES.map((_, i) => doc.eval(`string(/testsuites/testsuite/testcase[${i + 1}]/@name)`))).toEqual(RULES.map((r) => r.id));
    expect(doc.eval('count(//testcase)')).toBe(41);
    expect(doc.eval('count(//testcase[failure])')).toBe(16);
    expect(doc.eval('count(//testcase[system-out])')).toBe(2);
    for (const path of ['/testsuites', '/testsuites/testsuite']) {
      expect(doc.eval(`string(${path}/@tests)`)).toBe('41');
      expect(doc.eval(`string(${path}/@failures)`)).toBe('16');
      expect(doc.eval(`string(${path}/@errors)`)).toBe('0');
    }
    expect(doc.eval('string(//testcase[@name="client-id-after-first"]/failure/@message)')).toBe('2 errors');
    expect(doc.eval('string(//testcase[@name="member-id-mismatch"]/failure/@type)')).toBe('warning');
    expect(doc.eval('string(//testcase[@name="client-id-after-first"]/failure)')).toBe(
      'fixtures/kip1313-mix.pcapng frame 42, 10.2.0.24:43001 -> 10.1.0.12:9092, Metadata v12, correlation 2: ClientId "payments-api" sent on a request other than the first of the connection\n' +
        'fixtures/kip1313-mix.pcapng frame 44, 10.2.0.24:43001 -> 10.1.0.12:9092, GetTelemetrySubscriptions v0, correlation 3: ClientId "payments-api" sent on a request other than the first of the connection',
    );
    expect(doc.eval('string(//testcase[@name="capture-gap"]/system-out)')).toBe(
      'fixtures/kip1313-mix.pcapng frame 85, 10.2.0.21:40002 -> 10.1.0.12:9092: 1319 bytes from the client are missing from the capture',
    );
    doc.dispose();
  });

  it('makes info findings pass and turned-off rules pass', async () => {
    const off = await analyzeFiles([MIX], {}, { severities: new Map([['client-id-after-first', 'off'], ['member-id-mismatch', 'info']]) });
    const doc = junitDoc(renderJunit(off, WARNINGS_FAIL));
    expect(doc.eval('count(//testcase[@name="client-id-after-first"]/*)')).toBe(0);
    expect(doc.eval('string(//testcase[@name="member-id-mismatch"]/system-out)')).toBe(
      'fixtures/kip1313-mix.pcapng frame 53, 10.2.0.25:44001 -> 10.1.0.13:9092, ConsumerGroupHeartbeat v0, correlation 3: MemberId "Tq3nWZ0bR1ubfIX6i9-Dfw" is not the client instance ID DZ6PemtcTT6PGis8TV5vcA',
    );
    expect(doc.eval('string(/testsuites/@failures)')).toBe('14');
    doc.dispose();
  });

  it('shows what a baseline suppressed as a property and in the summary', () => {
    const { report } = applyBaseline(mix, parseBaseline(JSON.stringify({ version: 1, createdBy: 'kcid', entries: [] }), 'b.json'));
    const suppressed = applyBaseline(report, { version: 1, entries: [], fingerprints: new Set(fingerprintAll(mix).slice(0, 3)) }).report;
    const doc = junitDoc(renderJunit(suppressed, WARNINGS_FAIL));
    expect(doc.eval('string(//property[@name="suppressed"]/@value)')).toBe('3');
    expect(doc.eval('string(/testsuites/testsuite/system-out)')).toBe(
      '1 capture, 116 packets, 11 Kafka connections (port 9092), 27 requests, 9 client instances: 13 errors, 4 warnings, 2 notes, 3 suppressed by the baseline',
    );
    doc.dispose();
  });

  it('fails only rules with findings at or above --fail-on: the others pass with their findings in system-out', () => {
    const count = (failOn: 'error' | 'warning' | 'info' | 'none') => {
      const doc = junitDoc(renderJunit(mix, { failOn }));
      const result = [doc.eval('string(/testsuites/@failures)'), doc.eval('count(//testcase[system-out])'), doc.eval('string(//testcase[@name="member-id-mismatch"]/system-out)')];
      doc.dispose();
      return result;
    };
    const memberId =
      'fixtures/kip1313-mix.pcapng frame 53, 10.2.0.25:44001 -> 10.1.0.13:9092, ConsumerGroupHeartbeat v0, correlation 3: MemberId "Tq3nWZ0bR1ubfIX6i9-Dfw" is not the client instance ID DZ6PemtcTT6PGis8TV5vcA';
    // The mix has 12 rules with errors, 4 with warnings, 2 with notes.
    expect(count('error')).toEqual(['12', 6, memberId]);
    expect(count('warning')).toEqual(['16', 2, '']);
    expect(count('info')).toEqual(['18', 0, '']);
    expect(count('none')).toEqual(['0', 18, memberId]);
    expect(renderJunit(mix)).toBe(renderJunit(mix, { failOn: 'error' }));
  });

  it('renders an empty report: every rule passes', () => {
    const xml = renderJunit(withFindings({ ...mix, inputs: [] }, []), WARNINGS_FAIL);
    expect(xml).toBe(
      [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<testsuites name="kcid" tests="41" failures="0" errors="0" time="0">',
        '  <testsuite name="kcid" tests="41" failures="0" errors="0" skipped="0" time="0">',
        ...RULES.map((r) => `    <testcase classname="kcid" name="${r.id}" time="0"/>`),
        '    <system-out>0 captures, 0 packets, 11 Kafka connections, 27 requests, 9 client instances: 0 errors, 0 warnings, 0 notes</system-out>',
        '  </testsuite>',
        '</testsuites>',
        '',
      ].join('\n'),
    );
    junitDoc(xml).dispose();
  });

  it('lists rules it does not know (a summary from a newer kcid) after the registry', () => {
    const f: Finding = { ...mix.findings[0]!, rule: 'from-the-future', severity: 'warning' };
    const doc = junitDoc(renderJunit(withFindings(mix, [f]), WARNINGS_FAIL));
    expect(doc.eval('string(/testsuites/testsuite/testcase[last()]/@name)')).toBe('from-the-future');
    expect(doc.eval('string(/testsuites/@tests)')).toBe('42');
    expect(doc.eval('string(/testsuites/@failures)')).toBe('1');
    doc.dispose();
  });

  it.each([
    ['markup', `a&b<c>d"e'f`, 'a&amp;b&lt;c&gt;d&quot;e&apos;f'],
    ['C0 controls XML forbids', 'a\x00b\x08c\x0bd\x1fe', 'a\\x00b\\x08c\\x0bd\\x1fe'],
    ['tab, LF, CR kept', 'a\tb\nc\rd', 'a\tb\nc\rd'],
    ['DEL and C1 (8-bit CSI)', 'a\x7fb\x9bc', 'a\\x7fb\\x9bc'],
    ['U+FFFE, U+FFFF', 'a\ufffeb\uffff', 'a\\u{fffe}b\\u{ffff}'],
    ['lone surrogates', 'a\ud800b\udc00', 'a\\u{d800}b\\u{dc00}'],
    ['a surrogate pair', 'a\u{1f600}b', 'a\u{1f600}b'],
    ['bidi override, zero-width space', 'a\u202eb\u200bc', 'a\\u{202e}b\\u{200b}c'],
    ['CDATA terminator', ']]>', ']]&gt;'],
  ])('xmlEscape: %s', (_name, input, expected) => {
    expect(xmlEscape(input)).toBe(expected);
  });
});

describe('sarif', () => {
  it('renders the mix fixture as the golden SARIF, valid against the SARIF 2.1.0 schema', () => {
    const text = renderSarif(mix, '9.9.9');
    checkGolden('kip1313-mix.sarif.json', text);
    expect(sarifErrors(text)).toEqual([]);
  });

  it('describes every rule in the driver, and each finding at its capture file and frame', () => {
    const log = JSON.parse(renderSarif(mix, '9.9.9', 'https://kcid.example/docs')) as {
      runs: { tool: { driver: Record<string, unknown> & { rules: Record<string, unknown>[] } }; artifacts: unknown[]; results: Record<string, unknown>[] }[];
    };
    const run = log.runs[0]!;
    expect(run.tool.driver.name).toBe('kcid');
    expect(run.tool.driver.version).toBe('9.9.9');
    expect(run.tool.driver.informationUri).toBe('https://kcid.example/docs');
    expect(run.tool.driver.rules.map((r) => r.id)).toEqual(RULES.map((r) => r.id));
    expect(run.tool.driver.rules[11]).toEqual({
      id: 'member-id-mismatch',
      shortDescription: { text: RULES[11]!.summary },
      fullDescription: { text: RULES[11]!.explanation },
      help: { text: RULES[11]!.spec },
      defaultConfiguration: { level: 'warning' },
    });
    expect(run.artifacts).toEqual([{ location: { uri: 'fixtures/kip1313-mix.pcapng' } }]);
    expect(run.results).toHaveLength(22);
    const first = mix.findings.findIndex((f) => f.rule === 'client-id-after-first');
    expect(run.results[first]).toEqual({
      ruleId: 'client-id-after-first',
      ruleIndex: 3,
      level: 'error',
      message: { text: 'ClientId "payments-api" sent on a request other than the first of the connection' },
      locations: [{ physicalLocation: { artifactLocation: { uri: 'fixtures/kip1313-mix.pcapng', index: 0 }, region: { startLine: 42 } } }],
      partialFingerprints: { 'kcid/v1': fingerprintAll(mix)[first] },
      properties: {
        frame: 42,
        time: '2025-12-01T00:00:00.004100Z',
        client: '10.2.0.24:43001',
        broker: '10.1.0.12:9092',
        apiKey: 3,
        apiName: 'Metadata',
        apiVersion: 12,
        correlationId: 2,
        clientInstanceId: 'xaHnsh0_Toqca38uDUqLkQ',
      },
    });
    expect(run.results.map((r) => r.level)).toEqual(mix.findings.map((f) => ({ error: 'error', warning: 'warning', info: 'note' })[f.severity]));
    expect(run.results.map((r) => (r.partialFingerprints as Record<string, string>)['kcid/v1'])).toEqual(fingerprintAll(mix));
  });

  it('marks results new and counts the suppressed ones when a baseline was used', () => {
    const { report } = applyBaseline(mix, { version: 1, entries: [], fingerprints: new Set(fingerprintAll(mix).slice(0, 2)) });
    const text = renderSarif(report, '9.9.9');
    expect(sarifErrors(text)).toEqual([]);
    const run = (JSON.parse(text) as { runs: { results: { baselineState: string }[]; properties: unknown }[] }).runs[0]!;
    expect(run.properties).toEqual({ suppressed: 2 });
    expect(run.results).toHaveLength(20);
    expect(new Set(run.results.map((r) => r.baselineState))).toEqual(new Set(['new']));
  });

  it.each([
    ['fixtures/a b#c?.pcap', 'fixtures/a%20b%23c%3F.pcap'],
    ['C:x.pcap', 'C%3Ax.pcap'],
    ['caf\u00e9.pcap', 'caf%C3%A9.pcap'],
    ['bad\ud800.pcap', 'bad%EF%BF%BD.pcap'],
    ['/var/tmp/a b.pcap', 'file:///var/tmp/a%20b.pcap'],
    ['/x/a|b[1]^#?.pcap', 'file:///x/a%7Cb%5B1%5D%5E%23%3F.pcap'],
  ])('fileUri(%j) is %j', (path, uri) => {
    expect(fileUri(path)).toBe(uri);
  });

  it('locates standard input by description, and findings about a whole capture without a region', () => {
    const whole: Finding = { ...mix.findings[0]!, rule: 'capture-truncated', severity: 'info', frame: null, client: null, broker: null };
    const report = withFindings({ ...mix, inputs: [{ ...mix.inputs[0]!, file: '-' }] }, [whole]);
    const text = renderSarif(report, '9.9.9');
    expect(sarifErrors(text)).toEqual([]);
    const run = (JSON.parse(text) as { runs: { artifacts: unknown; results: { locations: unknown; level: string }[] }[] }).runs[0]!;
    expect(run.artifacts).toEqual([{ location: { description: { text: 'standard input' } } }]);
    expect(run.results[0]!.locations).toEqual([{ physicalLocation: { artifactLocation: { description: { text: 'standard input' }, index: 0 } } }]);
    expect(run.results[0]!.level).toBe('note');
  });
});

describe('markdown', () => {
  it('renders the mix fixture as the golden Markdown', () => {
    checkGolden('kip1313-mix.md', renderMarkdown(mix));
  });

  it.each([
    ['error' as const, '## ❌ kcid: 15 errors, 5 warnings, 2 notes'],
    ['none' as const, '## ✅ kcid: 15 errors, 5 warnings, 2 notes'],
  ])('marks the headline by --fail-on %s', (failOn, headline) => {
    expect(renderMarkdown(mix, { failOn }).split('\n')[0]).toBe(headline);
  });

  it('passes with no findings, fails on warnings when asked', async () => {
    expect(renderMarkdown(withFindings(mix, [])).split('\n')[0]).toBe('## ✅ kcid: no findings');
    const warningsOnly = withFindings(mix, mix.findings.filter((f) => f.severity === 'warning'));
    expect(renderMarkdown(warningsOnly).split('\n')[0]).toBe('## ✅ kcid: 0 errors, 5 warnings, 0 notes');
    expect(renderMarkdown(warningsOnly, { failOn: 'warning' }).split('\n')[0]).toBe('## ❌ kcid: 0 errors, 5 warnings, 0 notes');
  });

  it(`lists at most ${MAX_ROWS} findings per severity, then how many more`, () => {
    const clientId = mix.findings.find((f) => f.rule === 'client-id-after-first')!;
    const many = Array.from({ length: 60 }, (_, i) => ({ ...clientId, frame: i + 1 }));
    const md = renderMarkdown(withFindings(mix, many));
    const rows = md.split('\n').filter((l) => l.startsWith('| `client-id-after-first` |'));
    expect(rows).toHaveLength(50);
    expect(rows[49]).toBe(
      '| `client-id-after-first` | 50 | 10.2.0.24:43001 → 10.1.0.12:9092 | Metadata v12 | `ClientId "payments-api" sent on a request other than the first of the connection` |',
    );
    expect(md).toContain('### Errors (60)\n');
    expect(md).toContain('\n\n…and 10 more.\n');
  });

  it('shows the suppressed count in the summary line, and numbers frames by capture when there are several', async () => {
    const two = await analyzeFiles([MIX, MIX]);
    const { report } = applyBaseline(two, { version: 1, entries: [], fingerprints: new Set(fingerprintAll(two).slice(0, 1)) });
    const md = renderMarkdown(report);
    expect(md).toContain(
      '\n2 captures, 232 packets, 22 Kafka connections (port 9092), 54 requests, 9 client instances: 28 errors, 10 warnings, 4 notes, 2 suppressed by the baseline\n',
    );
    expect(md).toContain('\nCaptures:\n\n1. `fixtures/kip1313-mix.pcapng`\n2. `fixtures/kip1313-mix.pcapng`\n');
    expect(md).toContain('\n| `telemetry-zero-id-with-header` | 2:44 | 10.2.0.24:43001 → 10.1.0.12:9092 | GetTelemetrySubscriptions v0 |');
  });

  it.each([
    ['plain text', 'a', '`a`'],
    ['one backtick', 'a`b', '``a`b``'],
    ['a run of two', 'a``b`', '``` a``b` ```'],
    ['leading backtick', '`a', '`` `a ``'],
    ['spaces at both ends', ' a ', '`  a  `'],
    ['empty', '', ''],
    ['controls', 'a\nb\x1b\u202e', '`a\\x0ab\\x1b\\u{202e}`'],
  ])('code span: %s', (_name, input, expected) => {
    expect(code(input)).toBe(expected);
  });

  it('escapes plain text', () => {
    expect(plain('<b>&[x](y) *a* _b_ `c` |d| ~e~ \\')).toBe('&lt;b&gt;&amp;\\[x\\](y) \\*a\\* \\_b\\_ \\`c\\` \\|d\\| \\~e\\~ \\\\');
  });
});

describe('ndjson', () => {
  it('writes one finding per line, each the JSON format\'s finding object', () => {
    const text = renderFindingsNdjson(mix);
    const jsonFindings = (JSON.parse(renderJson(mix)) as { findings: unknown[] }).findings;
    expect(text.endsWith('\n')).toBe(true);
    expect(text.split('\n').slice(0, -1)).toEqual(jsonFindings.map((f) => JSON.stringify(f)));
    expect(text.split('\n')[mix.findings.findIndex((f) => f.rule === 'client-id-after-first')]).toBe(
      '{"rule":"client-id-after-first","severity":"error","message":"ClientId \\"payments-api\\" sent on a request other than the first of the connection",' +
        '"frame":42,"time":"2025-12-01T00:00:00.004100Z","client":"10.2.0.24:43001","broker":"10.1.0.12:9092","apiKey":3,"apiName":"Metadata","apiVersion":12,' +
        '"correlationId":2,"clientInstanceId":"xaHnsh0_Toqca38uDUqLkQ","input":1,"show":"kcid show fixtures/kip1313-mix.pcapng 42"}',
    );
  });

  it('writes nothing for no findings', () => {
    expect(renderFindingsNdjson(withFindings(mix, []))).toBe('');
  });
});

describe('hostile wire strings', () => {
  let report: Report;
  let file: string;
  beforeAll(async () => {
    ({ report, file } = await hostileReport());
  });

  const clientIdMessage = `ClientId "${sanitize(HOSTILE_CLIENT_ID)}" sent on a request other than the first of the connection`;
  const memberIdMessage = `MemberId "${sanitize(HOSTILE_MEMBER_ID)}" is not the client instance ID ${ID_A_B64}`;

  it('reaches the findings sanitized', () => {
    expect(report.findings.map((f) => [f.rule, f.frame, f.message])).toEqual([
      ['client-id-after-first', 6, clientIdMessage],
      ['member-id-mismatch', 6, memberIdMessage],
    ]);
    expect(clientIdMessage).toBe(
      'ClientId "evil\\x1b]0;pwned\\x07\\x00</failure>]]>|`x``y` @org/team [a](http://e.test) <img src=x>&amp;" sent on a request other than the first of the connection',
    );
  });

  it('stays valid JUnit, its text unchanged after parsing', () => {
    const xml = renderJunit(report, WARNINGS_FAIL);
    expect(xml).not.toMatch(/[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]/);
    expect(xml.match(/<\/failure>/g)).toHaveLength(2);
    const doc = junitDoc(xml);
    const where = `${sanitize(file)} frame 6, 10.9.0.1:50000 -> 10.1.0.11:9092, ConsumerGroupHeartbeat v0, correlation 2`;
    expect(doc.eval('string(//testcase[@name="client-id-after-first"]/failure)')).toBe(`${where}: ${clientIdMessage}`);
    expect(doc.eval('string(//testcase[@name="member-id-mismatch"]/failure)')).toBe(`${where}: ${memberIdMessage}`);
    expect(doc.eval('string(//property[@name="capture"]/@value)')).toBe(sanitize(file));
    doc.dispose();
  });

  it('stays valid SARIF, the file a percent-encoded file: URI', () => {
    const text = renderSarif(report, '9.9.9');
    expect(text).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f-\x9f]/);
    expect(sarifErrors(text)).toEqual([]);
    const run = (JSON.parse(text) as { runs: { artifacts: { location: { uri: string } }[]; results: { message: { text: string } }[] }[] }).runs[0]!;
    expect(run.artifacts[0]!.location.uri).toBe(`${pathToFileURL(dirname(file)).href}/cap%3C&%3E%7C%60%1B%5B2J%60.pcap`);
    expect(run.results.map((r) => r.message.text)).toEqual([clientIdMessage, memberIdMessage]);
  });

  it('stays inert Markdown: one table row per finding, wire strings in code spans', () => {
    const md = renderMarkdown(report);
    expect(md).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f-\x9f]/);
    const rows = md.split('\n').filter((l) => l.startsWith('| `client-id') || l.startsWith('| `member-id'));
    expect(rows).toEqual([
      '| `client-id-after-first` | 6 | 10.9.0.1:50000 → 10.1.0.11:9092 | ConsumerGroupHeartbeat v0 | ' +
        '```ClientId "evil\\x1b]0;pwned\\x07\\x00</failure>]]>\\|`x``y` @org/team [a](http://e.test) <img src=x>&amp;" sent on a request other than the first of the connection``` |',
      '| `member-id-mismatch` | 6 | 10.9.0.1:50000 → 10.1.0.11:9092 | ConsumerGroupHeartbeat v0 | ' +
        '```MemberId "</system-out>\\x0d\\x0a\\|``\\|" is not the client instance ID ASNFZ4mrze8BI0VniavN7w``` |',
    ]);
    expect(md).toContain(`\n| \`ASNFZ4mrze8BI0VniavN7w\` | header | \`\`\`evil\\x1b]0;pwned\\x07\\x00</failure>]]>\\|\`x\`\`y\` @org/team [a](http://e.test) <img src=x>&amp;\`\`\` | \`\`sw\\|\`x\` <1>\`\` |`);
    expect(md).toContain(`\nCapture: \`\`${sanitize(file)}\`\`\n`);
  });

  it('keeps unsanitized controls out of every format (a finding built by hand)', () => {
    const raw: Finding = { ...report.findings[0]!, message: 'a\x00b\nc\rd\x1b[31m\ud800|`' };
    const r = withFindings(report, [raw]);
    const doc = junitDoc(renderJunit(r, WARNINGS_FAIL));
    expect(doc.eval('string(//testcase[@name="client-id-after-first"]/failure)')).toMatch(/: a\\x00b\nc\rd\\x1b\[31m\\u\{d800\}\|`$/);
    doc.dispose();
    const md = renderMarkdown(r);
    expect(md).toContain('| `` a\\x00b\\x0ac\\x0dd\\x1b[31m\\u{d800}\\|` `` |');
    expect(sarifErrors(renderSarif(r, '9.9.9'))).toEqual([]);
    expect(renderFindingsNdjson(r)).toContain('"message":"a\\u0000b\\nc\\rd\\u001b[31m\\ud800|`"');
  });
});

describe('ndjson and json agree', () => {
  it('use the same finding object', () => {
    expect(renderFindingsNdjson(mix).split('\n')[3]).toBe(JSON.stringify({ ...findingJson(mix.findings[3]!), show: showCommand(mix, mix.findings[3]!) }));
  });
});

describe('json written directly', () => {
  it('connection rows written as text are the bytes JSON.stringify writes, whatever the strings', () => {
    const odd = ['10.0.0.1:50000', '[fd00::1]:9092', 'quote"back\\slash', 'bell\u0007', 'csi\u009b', 'bidi\u202e', 'é', ''];
    const connections = odd.map((text, i) => ({
      ...mix.connections[0]!,
      client: text,
      broker: odd[(i + 1) % odd.length]!,
      headerInstanceIds: i % 2 === 0 ? [] : [text],
      telemetryInstanceId: i % 3 === 0 ? null : 'XE0-LxoLTJ2Of2pbTD0uHw',
      startSeen: i % 2 === 0,
      requests: i * 1000,
      gaps: i,
      // TLS connections carry their handshake, wire strings (SNI, ALPN, certificate subject) included.
      ...(i % 2 === 1
        ? {
            tls: {
              version: 'TLS 1.3',
              offered: 'TLS 1.3',
              cipher: 'TLS_AES_128_GCM_SHA256',
              sni: text,
              alpn: [text, 'kafka'],
              helloRetry: i === 3,
              resumed: i === 5,
              certificate: i === 1 ? null : { subject: `CN=${text}`, notBefore: '2026-01-01T00:00:00Z', notAfter: null },
              clientRandom: '0123456789abcdef',
              decrypted: i > 3,
            },
          }
        : {}),
    }));
    for (const report of [mix, { ...mix, connections }, { ...mix, connections: [] }]) {
      expect(renderJson(report)).toBe(`${safeJson(reportJson(report), 2)}\n`);
    }
  });
});

describe('SARIF and NDJSON are written in pieces (issue 26.15)', () => {
  it('the same bytes as one string, no piece holding more than a batch of findings', async () => {
    const { analyzeFiles } = await import('./helpers.js');
    const { writeSarif } = await import('../src/report/sarif.js');
    const { writeFindingsNdjson, findingNdjson } = await import('../src/report/ndjson.js');
    const { safeJson } = await import('../src/base/json-text.js');
    const one = await analyzeFiles(['fixtures/kip1313-mix.pcapng']);
    const findings = Array.from({ length: 5_000 }, (_, i) => ({ ...one.findings[i % one.findings.length]!, frame: i + 1 }));
    const report = { ...one, findings };
    for (const [name, writer] of [
      ['sarif', (w: (s: string) => void) => writeSarif(report, w, '0.1.0')],
      ['ndjson', (w: (s: string) => void) => writeFindingsNdjson(report, w)],
    ] as const) {
      const pieces: string[] = [];
      writer((s) => pieces.push(s));
      const text = pieces.join('');
      const longest = Math.max(...pieces.map((p) => p.length));
      expect([name, pieces.length > 4, longest < text.length / 4]).toEqual([name, true, true]);
      if (name === 'sarif') {
        const log = JSON.parse(text);
        expect(log.runs[0].results).toHaveLength(5_000);
        expect(text).toBe(`${safeJson(log, 2)}\n`);
      } else expect(text).toBe(findings.map((f) => findingNdjson(report, f)).join(''));
    }
  });
});
