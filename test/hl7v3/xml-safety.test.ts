import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseXml, defaultXmlLimits } from '../../src/hl7v3/xml/parse.ts';
import { XmlRejection, type XmlRejectionReason } from '../../src/hl7v3/xml/rejection.ts';

function rejection(body: string | Uint8Array, limits = defaultXmlLimits): XmlRejection {
  try {
    parseXml(typeof body === 'string' ? Buffer.from(body, 'utf8') : body, limits);
  } catch (error) {
    assert.ok(error instanceof XmlRejection, `expected an XmlRejection, got ${String(error)}`);
    return error;
  }
  assert.fail('the document was accepted');
}

function assertRejected(body: string | Uint8Array, reason: XmlRejectionReason, limits = defaultXmlLimits): XmlRejection {
  const error = rejection(body, limits);
  assert.equal(error.reason, reason, error.message);
  return error;
}

test('XXE: an external entity naming a local file is refused and the file is never read', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cg-xxe-'));
  const secret = join(dir, 'secret.txt');
  writeFileSync(secret, 'TOP-SECRET-CONTENT');
  const body = `<?xml version="1.0"?>
<!DOCTYPE PRPA_IN201301UV02 [<!ENTITY xxe SYSTEM "file://${secret}">]>
<PRPA_IN201301UV02 xmlns="urn:hl7-org:v3"><id root="1.2.3" extension="&xxe;"/></PRPA_IN201301UV02>`;
  const error = assertRejected(body, 'doctype');
  assert.equal(error.line, 2);
  assert.doesNotMatch(error.message, /TOP-SECRET/);
});

test('XXE: an external DTD (SYSTEM identifier, no internal subset) is refused', () => {
  assertRejected('<!DOCTYPE a SYSTEM "http://127.0.0.1:1/evil.dtd"><a/>', 'doctype');
});

test('billion laughs: nested entity declarations are refused before any expansion', () => {
  let declarations = '<!ENTITY lol0 "lol">';
  for (let i = 1; i <= 9; i++) declarations += `<!ENTITY lol${i} "${`&lol${i - 1};`.repeat(10)}">`;
  const body = `<?xml version="1.0"?><!DOCTYPE lolz [${declarations}]><lolz>&lol9;</lolz>`;
  const before = process.memoryUsage().heapUsed;
  for (let i = 0; i < 100; i++) assertRejected(body, 'doctype');
  // 10^9 expansions would need gigabytes; refusing before parsing needs next to nothing.
  assert.ok(process.memoryUsage().heapUsed - before < 64 * 1024 * 1024);
});

test('an entity reference without a declaration is not well-formed', () => {
  const error = assertRejected('<a>&xxe;</a>', 'malformed');
  assert.match(error.message, /undefined entity/);
});

test('a DOCTYPE hidden in UTF-16 is still found (the check runs on decoded text)', () => {
  const text = '<!DOCTYPE a [<!ENTITY x "y">]><a>&x;</a>';
  const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
  assertRejected(utf16, 'doctype');
});

test('a lower-case doctype is not XML and is refused as malformed', () => {
  assertRejected('<!doctype a><a/>', 'malformed');
});

test('deep nesting is refused at the depth limit, without recursion', () => {
  const depth = 100_000;
  const error = assertRejected('<a>'.repeat(depth) + '</a>'.repeat(depth), 'too-deep');
  assert.match(error.message, /nested more than 64 deep/);
  // Just inside the limit is fine.
  const root = parseXml(Buffer.from('<a>'.repeat(64) + '</a>'.repeat(64)));
  assert.equal(root.name, 'a');
});

test('too many elements or attributes are refused', () => {
  assertRejected(`<a>${'<b/>'.repeat(30)}</a>`, 'too-many-nodes', { ...defaultXmlLimits, maxElements: 20 });
  const attributes = Array.from({ length: 100 }, (_, i) => `a${i}="x"`).join(' ');
  assertRejected(`<a ${attributes}/>`, 'too-many-nodes');
});

test('a body over the size limit is refused before decoding', () => {
  assertRejected(Buffer.alloc(2048, 0x20), 'too-large', { ...defaultXmlLimits, maxBytes: 1024 });
});

test('malformed XML is refused with a position', () => {
  const cases = ['', 'hello', '<a>', '<a></b>', '<a/><b/>', '<a x="1" x="2"/>', '<a x=1/>', '<?xml version="1.0"?>', '<a>\u0001</a>', '<p:a/>'];
  for (const body of cases) {
    const error = assertRejected(body, 'malformed');
    assert.match(error.message, /^the body is not well-formed XML: /);
  }
});

test('bytes that are not valid in the encoding are refused, and unknown encodings too', () => {
  assertRejected(Buffer.from([0x3c, 0x61, 0x3e, 0xc3, 0x28, 0x3c, 0x2f, 0x61, 0x3e]), 'encoding');
  assertRejected('<?xml version="1.0" encoding="EBCDIC-US"?><a/>', 'encoding');
});

test('a UTF-16 label on 8-bit bytes (no byte order mark, no zero byte) is read as UTF-8, strictly', () => {
  assert.equal(parseXml(Buffer.from('<?xml version="1.0" encoding="utf-16"?><a>Müller</a>')).text, 'Müller');
  assertRejected(Buffer.concat([Buffer.from('<?xml version="1.0" encoding="UTF-16"?><a>M'), Buffer.from([0xfc]), Buffer.from('ller</a>')]), 'encoding');
});

test('Latin-1 declared documents decode to the right characters', () => {
  const body = Buffer.concat([Buffer.from('<?xml version="1.0" encoding="ISO-8859-1"?><a>M'), Buffer.from([0xfc]), Buffer.from('ller</a>')]);
  assert.equal(parseXml(body).text, 'Müller');
});

test('namespaces are resolved: a prefixed v3 document reads like a default-namespace one', () => {
  const root = parseXml(Buffer.from('<hl7:PRPA_IN201301UV02 xmlns:hl7="urn:hl7-org:v3"><hl7:id root="1.2"/></hl7:PRPA_IN201301UV02>'));
  assert.equal(root.name, 'PRPA_IN201301UV02');
  assert.equal(root.namespace, 'urn:hl7-org:v3');
  assert.equal(root.children[0]!.attributes.get('root'), '1.2');
  assert.equal(root.children[0]!.path, '/PRPA_IN201301UV02/id[1]');
});
