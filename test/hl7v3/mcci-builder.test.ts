import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildMcciAcknowledgement, formatTimestamp } from '../../src/hl7v3/ack/mcci-builder.ts';
import { readEnvelope } from '../../src/hl7v3/message/envelope.ts';
import { attribute, childNamed, childrenNamed, descend, textOf } from '../../src/hl7v3/xml/element.ts';
import { parseXml } from '../../src/hl7v3/xml/parse.ts';
import { v3Fixture } from './support.ts';

test('an acknowledgement swaps sender and receiver, names the target message and carries every detail', () => {
  const inbound = readEnvelope(parseXml(v3Fixture('PIX_FEED_REG_Maximal_Request.xml')));
  const xml = buildMcciAcknowledgement({
    id: { root: '11111111-2222-4333-8444-555555555555' },
    creationTime: new Date('2026-11-22T06:01:02.345Z'),
    processingCode: inbound.processingCode ?? 'P',
    sender: inbound.receiver,
    receiver: inbound.sender,
    typeCode: 'AE',
    targetMessage: inbound.id,
    details: [
      { typeCode: 'E', code: 'SYN102', text: 'birthTime "1977" & <more>', location: '/PRPA_IN201301UV02/birthTime[1]' },
      { typeCode: 'W', code: 'SYN101', text: 'no root' },
    ],
  });
  assert.ok(xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>'));
  const ack = parseXml(Buffer.from(xml));
  assert.equal(ack.name, 'MCCI_IN000002UV01');
  assert.equal(ack.namespace, 'urn:hl7-org:v3');
  assert.equal(attribute(childNamed(ack, 'interactionId'), 'extension'), 'MCCI_IN000002UV01');
  assert.equal(attribute(childNamed(ack, 'creationTime'), 'value'), '20261122060102+0000');
  // The ack's envelope reads back as the inbound one mirrored.
  const mirrored = readEnvelope(ack);
  assert.deepEqual(mirrored.receiver, inbound.sender);
  assert.deepEqual(mirrored.sender, inbound.receiver);

  const acknowledgement = childNamed(ack, 'acknowledgement');
  assert.equal(attribute(childNamed(acknowledgement, 'typeCode'), 'code'), 'AE');
  const target = descend(acknowledgement, 'targetMessage', 'id');
  assert.equal(attribute(target, 'root'), '21acf7be-007c-41e6-b176-d0969794983b');
  assert.equal(attribute(target, 'extension'), '345');
  const details = childrenNamed(acknowledgement, 'acknowledgementDetail');
  assert.equal(details.length, 2);
  assert.equal(attribute(details[0], 'typeCode'), 'E');
  assert.equal(attribute(childNamed(details[0], 'code'), 'code'), 'SYN102');
  assert.equal(attribute(childNamed(details[0], 'code'), 'codeSystem'), '2.16.840.1.113883.5.1100');
  assert.equal(textOf(childNamed(details[0], 'text')), 'birthTime "1977" & <more>');
  assert.equal(textOf(childNamed(details[0], 'location')), '/PRPA_IN201301UV02/birthTime[1]');
  assert.equal(childNamed(details[1], 'location'), undefined);
});

test('without a readable inbound message the ack still is valid: null-flavored devices, no target', () => {
  const xml = buildMcciAcknowledgement({
    id: { root: '1.2.3', extension: 'x' },
    creationTime: new Date(),
    processingCode: 'bogus',
    sender: undefined,
    receiver: undefined,
    typeCode: 'AE',
    targetMessage: undefined,
    details: [{ typeCode: 'E', code: 'SYN', text: 'not XML \u0000\u0007 here' }],
  });
  const ack = parseXml(Buffer.from(xml));
  assert.equal(attribute(descend(ack, 'receiver', 'device', 'id'), 'nullFlavor'), 'UNK');
  assert.equal(attribute(descend(ack, 'sender', 'device', 'id'), 'nullFlavor'), 'UNK');
  assert.equal(attribute(childNamed(ack, 'processingCode'), 'code'), 'P');
  assert.equal(descend(ack, 'acknowledgement', 'targetMessage'), undefined);
  assert.equal(textOf(descend(ack, 'acknowledgement', 'acknowledgementDetail', 'text')), 'not XML here');
});

test('timestamps are UTC in the v3 TS form', () => {
  assert.equal(formatTimestamp(new Date('2009-11-12T11:51:39Z')), '20091112115139+0000');
});
