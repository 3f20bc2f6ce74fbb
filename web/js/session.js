// @ts-check
import { del } from './api.js';

/** Signs out on the server; the page forgets the user whatever the answer. */
/** @param {() => void} done */
export async function signOut(done) {
  try {
    await del('/api/session');
  } catch {
    // The session may have ended already; nothing else to do.
  }
  done();
}
