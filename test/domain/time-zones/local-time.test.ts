// Local wall-clock times read in an IANA zone, and the names a site or client may be given.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isDomainError } from '../../../src/domain/errors.ts';
import { normalizeTimeZone, optionalTimeZone } from '../../../src/domain/time-zones/time-zone-name.ts';
import { readLocalTime, type WallClock } from '../../../src/domain/time-zones/local-time.ts';

const at = (year: number, month: number, day: number, hour: number, minute: number, second = 0): WallClock => ({ year, month, day, hour, minute, second, millisecond: 0 });
const read = (wall: WallClock, zone: string) => {
  const local = readLocalTime(wall, zone);
  return { instant: local.instant.toISOString(), offset: local.offset, hour: local.wall.hour, minute: local.wall.minute };
};

test('daylight saving is applied for the instant, not for today', () => {
  assert.deepEqual(read(at(2026, 7, 1, 9, 30), 'Europe/London'), { instant: '2026-07-01T08:30:00.000Z', offset: '+01:00', hour: 9, minute: 30 });
  assert.deepEqual(read(at(2026, 1, 15, 9, 30), 'Europe/London'), { instant: '2026-01-15T09:30:00.000Z', offset: '+00:00', hour: 9, minute: 30 });
  assert.deepEqual(read(at(2026, 1, 1, 0, 0), 'Asia/Kolkata'), { instant: '2025-12-31T18:30:00.000Z', offset: '+05:30', hour: 0, minute: 0 });
  // Historical rules: British Double Summer Time (+02:00) in 1944.
  assert.equal(read(at(1944, 6, 6, 12, 0), 'Europe/London').offset, '+02:00');
});

test('a fall-back overlap is read as the earlier of its two instants', () => {
  assert.deepEqual(read(at(2026, 10, 25, 1, 30), 'Europe/London'), { instant: '2026-10-25T00:30:00.000Z', offset: '+01:00', hour: 1, minute: 30 });
  assert.deepEqual(read(at(2026, 11, 1, 1, 30), 'America/New_York'), { instant: '2026-11-01T05:30:00.000Z', offset: '-04:00', hour: 1, minute: 30 });
  // Lord Howe Island falls back half an hour.
  assert.deepEqual(read(at(2026, 4, 5, 1, 45), 'Australia/Lord_Howe'), { instant: '2026-04-04T14:45:00.000Z', offset: '+11:00', hour: 1, minute: 45 });
  // Just outside the overlap both ways there is one reading.
  assert.equal(read(at(2026, 10, 25, 2, 0), 'Europe/London').instant, '2026-10-25T02:00:00.000Z');
  assert.equal(read(at(2026, 10, 25, 0, 59, 59), 'Europe/London').instant, '2026-10-24T23:59:59.000Z');
});

test('a spring-forward gap is moved forward by the length of the gap', () => {
  assert.deepEqual(read(at(2026, 3, 29, 1, 30), 'Europe/London'), { instant: '2026-03-29T01:30:00.000Z', offset: '+01:00', hour: 2, minute: 30 });
  assert.deepEqual(read(at(2026, 3, 8, 2, 0), 'America/New_York'), { instant: '2026-03-08T07:00:00.000Z', offset: '-04:00', hour: 3, minute: 0 });
  assert.deepEqual(read(at(2026, 3, 8, 2, 59, 59), 'America/New_York'), { instant: '2026-03-08T07:59:59.000Z', offset: '-04:00', hour: 3, minute: 59 });
});

test('time zone names are checked against the runtime\'s IANA database and stored canonically', () => {
  assert.equal(normalizeTimeZone('Europe/London'), 'Europe/London');
  assert.equal(normalizeTimeZone(' europe/london '), 'Europe/London');
  assert.equal(normalizeTimeZone('US/Eastern'), 'America/New_York');
  assert.equal(normalizeTimeZone('UTC'), 'UTC');
  assert.equal(optionalTimeZone(''), null);
  assert.equal(optionalTimeZone(null), null);
  for (const bad of ['Mars/Olympus_Mons', '+01:00', '-0500', 'Z', 'Europe/London; DROP TABLE site', 'x'.repeat(100)]) {
    assert.throws(() => normalizeTimeZone(bad), (error: unknown) => isDomainError(error, 'invalid') && error.issues[0]!.location === 'time_zone', bad);
  }
});
