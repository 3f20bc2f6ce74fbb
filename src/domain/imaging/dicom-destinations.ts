/**
 * DICOM destinations: the AE titles a site's administrators register as C-MOVE destinations
 * (PS3.4 C.4.2.1.4: the SCP knows where each destination listens; the requestor names it only by
 * AE title). A C-MOVE to an AE title not registered for the called site is refused (0xA801).
 */
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../../storage/database.ts';
import { uniqueViolation } from '../../storage/errors.ts';
import { recordAudit } from '../audit/audit.ts';
import { DomainError, type DomainIssue } from '../errors.ts';
import type { Actor, SiteContext } from '../site-context.ts';

export interface DicomDestination {
  id: string;
  siteId: string;
  aeTitle: string;
  host: string;
  port: number;
  createdAt: Date;
}

export interface DicomDestinationInput {
  aeTitle: unknown;
  host: unknown;
  port: unknown;
}

/** A site has few destinations; the list is bounded all the same. */
export const maxDestinationsPerSite = 200;

const columns = 'id, site_id, ae_title, host, port, created_at';

function toDestination(row: Record<string, any>): DicomDestination {
  return { id: row.id, siteId: row.site_id, aeTitle: row.ae_title, host: row.host, port: row.port, createdAt: row.created_at };
}

// PS3.5 6.2 AE: 16 characters of the default repertoire without backslash or controls; leading
// and trailing spaces are not significant.
const aeTitlePattern = /^[\x21-\x5b\x5d-\x7e]([\x20-\x5b\x5d-\x7e]{0,14}[\x21-\x5b\x5d-\x7e])?$/;
// A DNS name (RFC 1123 labels) or an IPv4 / IPv6 literal.
const hostPattern = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*|[0-9A-Fa-f:.]+)$/;

function validate(input: DicomDestinationInput): { aeTitle: string; host: string; port: number } {
  const issues: DomainIssue[] = [];
  const aeTitle = typeof input.aeTitle === 'string' ? input.aeTitle.trim() : '';
  if (!aeTitlePattern.test(aeTitle)) issues.push({ message: 'AE title must be 1 to 16 characters of the DICOM default repertoire, without backslash', location: 'aeTitle' });
  const host = typeof input.host === 'string' ? input.host.trim() : '';
  if (host.length > 253 || !hostPattern.test(host)) issues.push({ message: 'host must be a host name or an IP address', location: 'host' });
  const port = typeof input.port === 'string' && /^\d{1,5}$/.test(input.port.trim()) ? Number(input.port) : input.port;
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535) issues.push({ message: 'port must be an integer from 1 to 65535', location: 'port' });
  if (issues.length > 0) throw new DomainError('invalid', issues.map((issue) => issue.message).join('; '), issues);
  return { aeTitle, host, port: port as number };
}

export async function createDicomDestination(db: Queryable, site: SiteContext, input: DicomDestinationInput): Promise<DicomDestination> {
  const value = validate(input);
  const { rows: counted } = await db.query<{ count: number }>('SELECT count(*)::int AS count FROM dicom_destination WHERE site_id = $1', [site.siteId]);
  if (counted[0]!.count >= maxDestinationsPerSite) throw new DomainError('business-rule', `a site has at most ${maxDestinationsPerSite} DICOM destinations`);
  try {
    const { rows } = await db.query(
      `INSERT INTO dicom_destination (site_id, id, ae_title, host, port) VALUES ($1, $2, $3, $4, $5) RETURNING ${columns}`,
      [site.siteId, randomUUID(), value.aeTitle, value.host, value.port],
    );
    const destination = toDestination(rows[0]!);
    await audit(db, site.siteId, site.actor, 'dicom-destination.created', destination);
    return destination;
  } catch (error) {
    if (uniqueViolation(error)?.constraint === 'dicom_destination_ae_title_key') {
      throw new DomainError('conflict', 'this site already has a destination with this AE title', [{ message: 'AE title already used', location: 'aeTitle' }]);
    }
    throw error;
  }
}

export async function listDicomDestinations(db: Queryable, site: SiteContext): Promise<DicomDestination[]> {
  const { rows } = await db.query(`SELECT ${columns} FROM dicom_destination WHERE site_id = $1 ORDER BY upper(ae_title) LIMIT ${maxDestinationsPerSite}`, [site.siteId]);
  return rows.map(toDestination);
}

/** The site's destination with this AE title (compared without case, as called AE titles are). */
export async function findDicomDestination(db: Queryable, site: SiteContext, aeTitle: string): Promise<DicomDestination | undefined> {
  const { rows } = await db.query({
    name: 'dicom-destination-by-ae-title',
    text: `SELECT ${columns} FROM dicom_destination WHERE site_id = $1 AND upper(ae_title) = upper($2)`,
    values: [site.siteId, aeTitle.trim()],
  });
  return rows[0] ? toDestination(rows[0]) : undefined;
}

/** Deletes by id or AE title; another site's destination is not found. */
export async function deleteDicomDestination(db: Queryable, site: SiteContext, idOrAeTitle: string): Promise<DicomDestination> {
  const isId = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(idOrAeTitle);
  const { rows } = await db.query(
    `DELETE FROM dicom_destination WHERE site_id = $1 AND ${isId ? 'id = $2::uuid' : 'upper(ae_title) = upper($2)'} RETURNING ${columns}`,
    [site.siteId, idOrAeTitle.trim()],
  );
  if (!rows[0]) throw new DomainError('not-found', 'no such DICOM destination');
  const destination = toDestination(rows[0]);
  await audit(db, site.siteId, site.actor, 'dicom-destination.deleted', destination);
  return destination;
}

function audit(db: Queryable, siteId: string, actor: Actor, action: string, destination: DicomDestination): Promise<void> {
  return recordAudit(db, { siteId, actor, action, targetType: 'dicom-destination', targetId: destination.id, details: { aeTitle: destination.aeTitle, host: destination.host, port: destination.port } });
}
