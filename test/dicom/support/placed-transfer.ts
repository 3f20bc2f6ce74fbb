import assert from 'node:assert/strict';
import type { StorageLayout } from '../../../src/storage/dicom/layout.ts';
import { writeSyntheticInstance } from './synthetic-instance.ts';

/**
 * A finished transfer of a small synthetic instance, linked to its final name as a C-STORE does
 * before its index commits: what a crash in that window leaves behind.
 */
export async function placedTransfer(layout: StorageLayout, siteId: string, uids: { study: string; series: string; instance: string }) {
  const temp = layout.temporaryPath(siteId);
  await writeSyntheticInstance(temp, uids, 2, 2);
  await layout.temporaryNamesDurable();
  const path = layout.instancePath(siteId, uids.study, uids.series, uids.instance);
  const placed = await layout.placeFile(temp, path);
  assert.ok(placed, 'nothing was at the final name');
  await placed.durable;
  return { temp, path };
}
