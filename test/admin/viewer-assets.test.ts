import assert from 'node:assert/strict';
import { test } from 'node:test';
import { adminOriginForFile } from './support.ts';

const origin = adminOriginForFile();

test("the viewer's bundle, its decoding worker and the codecs' WebAssembly are served by the admin origin itself", async () => {
  const bundle = await origin.app.inject({ url: '/assets/viewer-lib/cornerstone-viewer.js' });
  assert.equal(bundle.statusCode, 200);
  assert.match(String(bundle.headers['content-type']), /^text\/javascript/);
  assert.match(bundle.body, /decodeImageFrameWorker\.js/, 'the bundle starts its worker from beside itself');
  assert.equal((await origin.app.inject({ url: '/assets/viewer-lib/cornerstone-viewer.js', headers: { 'if-none-match': String(bundle.headers.etag) } })).statusCode, 304);
  const worker = await origin.app.inject({ url: '/assets/viewer-lib/decodeImageFrameWorker.js' });
  assert.equal(worker.statusCode, 200);
  const wasm = await origin.app.inject({ url: '/assets/viewer-lib/libjpegturbowasm_decode.wasm' });
  assert.equal(wasm.statusCode, 200);
  assert.equal(wasm.headers['content-type'], 'application/wasm');
  assert.deepEqual([...wasm.rawPayload.subarray(0, 4)], [0x00, 0x61, 0x73, 0x6d], 'a WebAssembly module');
});

test('nothing else is served from the viewer folder', async () => {
  for (const path of ['source-key', '..%2Fpackage.json', '%2E%2E%2F%2E%2E%2Fpackage.json', 'index.html', 'cornerstone-entry.js']) {
    assert.equal((await origin.app.inject({ url: `/assets/viewer-lib/${path}` })).statusCode, 404, path);
  }
});
