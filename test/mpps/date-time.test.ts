import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseDateTime } from '../../src/mpps/date-time.ts';

test('RFC 3339 date-times with an offset are read to the millisecond', () => {
  assert.equal(parseDateTime('2026-01-02T10:20:30Z')?.toISOString(), '2026-01-02T10:20:30.000Z');
  assert.equal(parseDateTime('2026-01-02t10:20:30.5z')?.toISOString(), '2026-01-02T10:20:30.500Z');
  assert.equal(parseDateTime('2026-01-02T10:20:30.123456789+02:30')?.toISOString(), '2026-01-02T07:50:30.123Z');
  assert.equal(parseDateTime('2026-01-02 01:00:00-05:00')?.toISOString(), '2026-01-02T06:00:00.000Z');
  assert.equal(parseDateTime('2028-02-29T00:00:00Z')?.toISOString(), '2028-02-29T00:00:00.000Z');
  assert.equal(parseDateTime('2016-12-31T23:59:60Z')?.toISOString(), '2017-01-01T00:00:00.000Z', 'leap second');
});

test('date-times without an offset, or off the calendar, are refused', () => {
  for (const value of [
    '2026-01-02T10:20:30',
    '2026-01-02',
    '2026-02-29T00:00:00Z',
    '2026-13-01T00:00:00Z',
    '2026-01-32T00:00:00Z',
    '2026-01-02T24:00:00Z',
    '2026-01-02T10:60:00Z',
    '2026-01-02T10:20:30+24:00',
    '2026-01-02T10:20:30+0100',
    '20260102T102030Z',
    ' 2026-01-02T10:20:30Z',
    '',
  ]) {
    assert.equal(parseDateTime(value), undefined, value);
  }
});
