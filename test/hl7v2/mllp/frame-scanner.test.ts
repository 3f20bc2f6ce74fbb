import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FrameScanner, frame, type ScanEvent } from '../../../src/hl7v2/mllp/frame-scanner.ts';

const frames = (events: ScanEvent[]) => events.filter((e) => e.kind === 'frame').map((e) => (e as { payload: Buffer }).payload.toString());

test('a frame split at every possible byte boundary comes out whole', () => {
  const bytes = frame(Buffer.from('MSH|^~\\&|A\rPID|1'));
  for (let cut = 1; cut < bytes.length; cut++) {
    const scanner = new FrameScanner({ maxFrameBytes: 1000 });
    const events = [...scanner.push(bytes.subarray(0, cut)), ...scanner.push(bytes.subarray(cut))];
    assert.deepEqual(frames(events), ['MSH|^~\\&|A\rPID|1'], `cut at ${cut}`);
  }
});

test('byte-by-byte delivery and several frames in one read', () => {
  const bytes = Buffer.concat([frame(Buffer.from('one')), frame(Buffer.from('two')), frame(Buffer.from('three'))]);
  const scanner = new FrameScanner({ maxFrameBytes: 1000 });
  assert.deepEqual(frames(scanner.push(bytes)), ['one', 'two', 'three']);
  const slow = new FrameScanner({ maxFrameBytes: 1000 });
  const events: ScanEvent[] = [];
  for (const byte of bytes) events.push(...slow.push(Buffer.of(byte)));
  assert.deepEqual(frames(events), ['one', 'two', 'three']);
});

test('bytes before the start block are reported as junk and discarded; CR/LF between frames is not junk', () => {
  const scanner = new FrameScanner({ maxFrameBytes: 1000 });
  const events = scanner.push(Buffer.concat([Buffer.from('GET / HTTP/1.1\r\n'), frame(Buffer.from('msg')), Buffer.from('\r\n')]));
  assert.deepEqual(events[0], { kind: 'junk', size: 14 });
  assert.deepEqual(frames(events), ['msg']);
  assert.equal(events.length, 2);
});

test('an oversized frame is reported with its head, and the next frame is intact', () => {
  const scanner = new FrameScanner({ maxFrameBytes: 100, headBytes: 10 });
  const big = frame(Buffer.from('MSH|' + 'x'.repeat(500)));
  const events = [...scanner.push(big.subarray(0, 50)), ...scanner.push(big.subarray(50)), ...scanner.push(frame(Buffer.from('next')))];
  assert.equal(events[0]!.kind, 'oversized');
  assert.equal((events[0] as { size: number }).size, 504);
  assert.equal((events[0] as { head: Buffer }).head.toString(), 'MSH|xxxxxx');
  assert.deepEqual(frames(events), ['next']);
});

test('a frame ends at its FS even when nothing follows yet: a sender that omits the CR and waits for its ACK is answered', () => {
  const scanner = new FrameScanner({ maxFrameBytes: 1000 });
  assert.deepEqual(frames(scanner.push(Buffer.from('\x0bonly\x1c'))), ['only']);
  // The CR, when it comes after all, is noise between frames, not junk and not part of the next.
  const later = scanner.push(Buffer.from('\r\x0bnext\x1c\r'));
  assert.deepEqual(frames(later), ['next']);
  assert.ok(!later.some((e) => e.kind === 'junk'));
});

test('FS without CR ends a frame; a new start block abandons an unfinished frame', () => {
  const scanner = new FrameScanner({ maxFrameBytes: 1000 });
  const events = scanner.push(Buffer.concat([Buffer.from('\x0bfirst\x1c'), Buffer.from('\x0bpartial'), Buffer.from('\x0bsecond\x1c\r')]));
  assert.deepEqual(frames(events), ['first', 'second']);
  assert.ok(events.some((e) => e.kind === 'junk'));
});
