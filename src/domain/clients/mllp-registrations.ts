/**
 * The MLLP registrations (enabled hl7-mllp clients with their sites) that admit a peer address,
 * as the listener asks for every connection and every message. They are read with one statement
 * and kept in memory together with the credential change-feed token read before that statement:
 * any committed change to an integration client (insert, update, delete) or a site, from any
 * process, notifies the feed at commit (migration 0002) and makes the kept copy stale at once, so
 * a disabled or narrowed client stops being accepted as soon as its change is notified. Without a
 * listening feed (not yet connected, or reconnecting) every call reads the database. The age limit
 * only bounds how long a copy can live should a notification ever be missed.
 */
import { Database, type Queryable } from '../../storage/database.ts';
import { ipMatches } from './ip-allow-list.ts';
import { readMllpRegistrations, type MllpRegistration } from './integration-clients.ts';

interface Snapshot {
  token: number;
  readAt: number;
  registrations: Promise<MllpRegistration[]>;
  /** Peer address -> the registrations admitting it, filled as peers appear. */
  byAddress: Map<string, MllpRegistration[]>;
}

const maxSnapshotAgeMs = 60_000;
// Peers are few (each must be registered to get past the connection check), but a CIDR range can
// admit many addresses: forgetting them all now and then is cheaper than tracking their use.
const maxRememberedAddresses = 1024;
const snapshots = new WeakMap<Database, Snapshot>();

export async function mllpRegistrationsForAddress(db: Queryable, remoteAddress: string): Promise<MllpRegistration[]> {
  const snapshot = db instanceof Database ? currentSnapshot(db) : undefined;
  if (!snapshot) return admitting(await readMllpRegistrations(db), remoteAddress);
  const known = snapshot.byAddress.get(remoteAddress);
  if (known) return known;
  const admitted = admitting(await snapshot.registrations, remoteAddress);
  if (snapshot.byAddress.size >= maxRememberedAddresses) snapshot.byAddress.clear();
  snapshot.byAddress.set(remoteAddress, admitted);
  return admitted;
}

function currentSnapshot(db: Database): Snapshot | undefined {
  const token = db.credentialChanges.token();
  if (token === undefined) return undefined;
  const now = Date.now();
  const kept = snapshots.get(db);
  if (kept && kept.token === token && now - kept.readAt < maxSnapshotAgeMs) return kept;
  // Callers arriving while the statement runs share it.
  const snapshot: Snapshot = { token, readAt: now, registrations: readMllpRegistrations(db), byAddress: new Map() };
  snapshots.set(db, snapshot);
  // A failed read (database away) must not be kept: the next caller reads again.
  snapshot.registrations.catch(() => {
    if (snapshots.get(db) === snapshot) snapshots.delete(db);
  });
  return snapshot;
}

function admitting(registrations: MllpRegistration[], remoteAddress: string): MllpRegistration[] {
  return registrations.filter((registration) => ipMatches(registration.client.allowedIps, remoteAddress));
}
