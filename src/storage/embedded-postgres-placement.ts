import { createHash } from 'node:crypto';
import { chmodSync, chownSync, cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, renameSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

/**
 * Where the embedded PostgreSQL's binaries and data live when it runs as another user.
 *
 * PostgreSQL refuses to run as root, so as root the server runs as the unprivileged "postgres"
 * user, which must reach its binaries (node_modules of the checkout) and its data folder
 * (CG_DATA_DIR/postgres). A checkout or CG_DATA_DIR under a folder of mode 0700 (root's home, a
 * mktemp -d folder) hides both from it. Then the binaries are copied, once per build, and the data
 * folder placed, under a root-owned 0755 folder that user can reach; the data folder stays the
 * user's own, mode 0700, and CG_DATA_DIR/postgres becomes a link to it.
 */
export const placementRoot = '/var/lib/clinical-gateway';

export interface Account {
  uid?: number;
  gid?: number;
}

export interface Placement {
  /** The folder holding bin/, lib/ and share/ of the PostgreSQL build. */
  nativeDir: string;
  pgdata: string;
  /** A folder beside pgdata, for initdb's password file: pgdata itself must be empty. */
  scratchDir: string;
  /** What was placed away from where it would be without an account to run as. */
  moved: { binaries?: string; data?: string };
}

export class PlacementError extends Error {
  override name = 'PlacementError';
}

/** Whether the account can search (x) or read (r) a path: asked of the kernel, as that account. */
function accountCan(account: Account, test: '-x' | '-r', path: string): boolean {
  if (account.uid === undefined) return true;
  return spawnSync('test', [test, path], { uid: account.uid, gid: account.gid!, stdio: 'ignore' }).status === 0;
}

export function placeEmbeddedPostgres(dataDir: string, packagedNativeDir: string, account: Account): Placement {
  const inside = join(dataDir, 'postgres');
  const placement: Placement = { nativeDir: packagedNativeDir, pgdata: inside, scratchDir: dataDir, moved: {} };
  if (account.uid === undefined) return placement;
  const binariesReachable = accountCan(account, '-x', join(packagedNativeDir, 'bin', 'postgres')) && accountCan(account, '-r', join(packagedNativeDir, 'share', 'postgresql', 'postgres.bki'));
  if (!binariesReachable) {
    placement.nativeDir = copiedBinaries(packagedNativeDir, account);
    placement.moved.binaries = placement.nativeDir;
  }
  const existing = lstatOrUndefined(inside);
  if (existing?.isSymbolicLink()) {
    // Placed by an earlier start: the link is the record of where.
    placement.pgdata = readlinkSync(inside);
    placement.scratchDir = join(placement.pgdata, '..');
    placement.moved.data = placement.pgdata;
  } else if (accountCan(account, '-x', dataDir)) {
    // Reachable where it is (or will be): nothing to place.
  } else if (existing) {
    throw new PlacementError(
      `the embedded database in ${inside} cannot be reached by the user postgres it runs as: make each folder above it searchable (chmod o+x), or move it and set CG_DATA_DIR, or set CG_DATABASE_URL`,
    );
  } else {
    const folder = placedDataFolder();
    placement.pgdata = join(folder, 'postgres');
    placement.scratchDir = folder;
    symlinkSync(placement.pgdata, inside);
    placement.moved.data = placement.pgdata;
  }
  return placement;
}

/** The root-owned 0755 folder everything placed lives under; refused when others could change it. */
function ensurePlacementRoot(): string {
  try {
    mkdirSync(placementRoot, { recursive: true, mode: 0o755 });
  } catch (error) {
    throw new PlacementError(
      `cannot create ${placementRoot} (${(error as NodeJS.ErrnoException).code}) for the embedded database: put the checkout and CG_DATA_DIR where the user postgres can reach them, or set CG_DATABASE_URL`,
    );
  }
  const stat = statSync(placementRoot);
  if (stat.uid !== 0 || (stat.mode & 0o022) !== 0) {
    throw new PlacementError(`${placementRoot} must be owned by root and writable by root alone (chown root:root, chmod 0755) to hold the embedded database`);
  }
  chmodSync(placementRoot, 0o755);
  return placementRoot;
}

/** A copy of the PostgreSQL build, named by the hash of its server binary so that builds never mix. */
function copiedBinaries(source: string, account: Account): string {
  const build = createHash('sha256').update(readFileSync(join(source, 'bin', 'postgres'))).digest('hex').slice(0, 16);
  const target = join(ensurePlacementRoot(), `postgresql-${build}`);
  if (!existsSync(target)) {
    const partial = mkdtempSync(`${target}.partial-`);
    cpSync(source, partial, { recursive: true, verbatimSymlinks: true });
    readableByAll(partial);
    try {
      renameSync(partial, target);
    } catch (error) {
      // Another process placed the same build first: use theirs.
      rmSync(partial, { recursive: true, force: true });
      if (!existsSync(target)) throw error;
    }
  }
  if (!accountCan(account, '-x', join(target, 'bin', 'postgres'))) {
    throw new PlacementError(`the user postgres cannot run ${join(target, 'bin', 'postgres')}: make ${placementRoot} and the folders above it searchable (chmod o+x), or set CG_DATABASE_URL`);
  }
  return target;
}

/** Root-owned, folders and programs 0755, other files 0644: readable by the server, changed by root alone. */
function readableByAll(path: string): void {
  const stat = lstatSync(path);
  if (stat.isSymbolicLink()) return;
  chownSync(path, 0, 0);
  if (stat.isDirectory()) {
    chmodSync(path, 0o755);
    for (const entry of readdirSync(path)) readableByAll(join(path, entry));
  } else {
    chmodSync(path, stat.mode & 0o111 ? 0o755 : 0o644);
  }
}

function placedDataFolder(): string {
  const folder = mkdtempSync(join(ensurePlacementRoot(), 'data-'));
  // The server's own pgdata inside is 0700; this folder only lets it pass through.
  chmodSync(folder, 0o755);
  return folder;
}

function lstatOrUndefined(path: string) {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}
