import { randomUUID } from 'node:crypto';
import { noteCredentialChange, type Queryable } from '../../storage/database.ts';
import { uniqueViolation } from '../../storage/errors.ts';
import { recordAudit } from '../audit/audit.ts';
import { DomainError } from '../errors.ts';
import type { Actor, SiteContext, SitePolicies } from '../site-context.ts';
import { normalizeAeTitle } from './ae-title.ts';
import { optionalTimeZone } from '../time-zones/time-zone-name.ts';
import { isUuid } from '../uuid.ts';
import { reviseExportExpiries } from '../bulk-export/export-jobs.ts';

export interface Site {
  id: string;
  name: string;
  aeTitle: string;
  policies: SitePolicies;
  /** IANA time zone name, or null (see SiteContext.timeZone). */
  timeZone: string | null;
  /** Days the data access log keeps its rows (src/domain/audit/data-access-log.ts). */
  dataAccessRetentionDays: number;
  /** Days the message log keeps raw message bodies; null: for ever (src/domain/retention). */
  messageBodyRetentionDays: number | null;
  /** Hours the site's export files are kept; null: the service-wide CG_EXPORT_RETENTION_HOURS. */
  exportRetentionHours: number | null;
  /** Days the site's refused-traffic records are kept; null: the service default (30 days). */
  refusedTrafficRetentionDays: number | null;
  /** Set once a service admin marked the site for offboarding (src/domain/retention/site-offboarding.ts). */
  offboarding: { markedAt: Date; purgeAfter: Date } | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface SiteRow {
  id: string;
  name: string;
  ae_title: string;
  patient_put_creates: boolean;
  mllp_allow_any_ip: boolean;
  time_zone: string | null;
  data_access_retention_days: number;
  message_body_retention_days: number | null;
  export_retention_hours: number | null;
  refused_traffic_retention_days: number | null;
  offboarding_marked_at: Date | null;
  purge_after: Date | null;
  created_at: Date;
  updated_at: Date;
}

const columns = 'id, name, ae_title, patient_put_creates, mllp_allow_any_ip, time_zone, data_access_retention_days, message_body_retention_days, export_retention_hours, refused_traffic_retention_days, offboarding_marked_at, purge_after, created_at, updated_at';

/** The site columns, qualified by a table alias, for queries that join the site to something else. */
export function siteColumns(alias: string): string {
  return columns.split(', ').map((column) => `${alias}.${column}`).join(', ');
}

export function toSite(row: SiteRow): Site {
  return {
    id: row.id,
    name: row.name,
    aeTitle: row.ae_title,
    policies: { patientPutCreates: row.patient_put_creates, mllpAllowAnyIp: row.mllp_allow_any_ip },
    timeZone: row.time_zone,
    dataAccessRetentionDays: row.data_access_retention_days,
    messageBodyRetentionDays: row.message_body_retention_days,
    exportRetentionHours: row.export_retention_hours,
    refusedTrafficRetentionDays: row.refused_traffic_retention_days,
    offboarding: row.offboarding_marked_at && row.purge_after ? { markedAt: row.offboarding_marked_at, purgeAfter: row.purge_after } : null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function siteContextFor(site: Site, actor: Actor): SiteContext {
  return { siteId: site.id, siteName: site.name, aeTitle: site.aeTitle, policies: site.policies, timeZone: site.timeZone, actor };
}

function normalizeName(name: string): string {
  const trimmed = name.trim();
  if (trimmed.length === 0 || trimmed.length > 200) {
    throw new DomainError('invalid', 'the site name must be 1 to 200 characters', [{ message: 'the site name must be 1 to 200 characters', location: 'name' }]);
  }
  return trimmed;
}

function translateUniqueViolation(error: unknown): never {
  const violation = uniqueViolation(error);
  if (violation?.constraint === 'site_name_key') throw new DomainError('conflict', 'a site with this name already exists', [{ message: 'a site with this name already exists', location: 'name' }]);
  if (violation?.constraint === 'site_ae_title_any_case_key') throw new DomainError('conflict', 'another site already uses this DICOM AE title', [{ message: 'another site already uses this DICOM AE title', location: 'ae_title' }]);
  throw error;
}

function validRetentionDays(days: number, what = 'the data access log retention', location = 'data_access_retention_days', most = 36_500, unit = 'days'): number {
  if (!Number.isInteger(days) || days < 1 || days > most) {
    throw new DomainError('invalid', `${what} must be 1 to ${most} ${unit}`, [{ message: `must be 1 to ${most} ${unit}`, location }]);
  }
  return days;
}

/** null (keep message bodies for ever) or 1 to 36500 days. */
function validBodyRetention(days: number | null): number | null {
  return days === null ? null : validRetentionDays(days, 'the message body retention', 'message_body_retention_days');
}

/** null (the service-wide CG_EXPORT_RETENTION_HOURS) or 1 to 8760 hours (a year). */
function validExportRetention(hours: number | null): number | null {
  return hours === null ? null : validRetentionDays(hours, 'the export file retention', 'export_retention_hours', 8_760, 'hours');
}

/** null (the service default, 30 days) or 1 to 3650 days. */
function validRefusedTrafficRetention(days: number | null): number | null {
  return days === null ? null : validRetentionDays(days, 'the refused traffic retention', 'refused_traffic_retention_days', 3_650);
}

export interface CreateSiteInput {
  name: string;
  aeTitle: string;
  patientPutCreates?: boolean;
  mllpAllowAnyIp?: boolean;
  /** IANA time zone name; blank or absent: none. */
  timeZone?: string | null;
  dataAccessRetentionDays?: number;
  messageBodyRetentionDays?: number | null;
  exportRetentionHours?: number | null;
  refusedTrafficRetentionDays?: number | null;
}

export async function createSite(db: Queryable, input: CreateSiteInput, actor: Actor): Promise<Site> {
  const name = normalizeName(input.name);
  const aeTitle = normalizeAeTitle(input.aeTitle);
  const timeZone = optionalTimeZone(input.timeZone);
  try {
    const { rows } = await db.query<SiteRow>(
      `INSERT INTO site (id, name, ae_title, patient_put_creates, mllp_allow_any_ip, time_zone, data_access_retention_days, message_body_retention_days,
                         export_retention_hours, refused_traffic_retention_days)
       VALUES ($1, $2, $3, $4, $5, $6, coalesce($7, 2190), $8, $9, $10) RETURNING ${columns}`,
      [
        randomUUID(),
        name,
        aeTitle,
        input.patientPutCreates ?? false,
        input.mllpAllowAnyIp ?? false,
        timeZone,
        input.dataAccessRetentionDays === undefined ? null : validRetentionDays(input.dataAccessRetentionDays),
        validBodyRetention(input.messageBodyRetentionDays ?? null),
        validExportRetention(input.exportRetentionHours ?? null),
        validRefusedTrafficRetention(input.refusedTrafficRetentionDays ?? null),
      ],
    );
    const site = toSite(rows[0]!);
    await recordAudit(db, { siteId: site.id, actor, action: 'site.created', targetType: 'site', targetId: site.id, details: { name, aeTitle, timeZone } });
    return site;
  } catch (error) {
    translateUniqueViolation(error);
  }
}

export interface UpdateSiteInput {
  name?: string;
  aeTitle?: string;
  patientPutCreates?: boolean;
  mllpAllowAnyIp?: boolean;
  /** IANA time zone name; blank or null removes the setting. */
  timeZone?: string | null;
  dataAccessRetentionDays?: number;
  /** null: keep message bodies for ever. */
  messageBodyRetentionDays?: number | null;
  /** null: the service-wide CG_EXPORT_RETENTION_HOURS. */
  exportRetentionHours?: number | null;
  /** null: the service default (30 days). */
  refusedTrafficRetentionDays?: number | null;
}

export async function updateSite(db: Queryable, siteId: string, input: UpdateSiteInput, actor: Actor): Promise<Site> {
  const current = await findSiteById(db, siteId);
  if (!current) throw new DomainError('not-found', 'no such site');
  const name = input.name === undefined ? current.name : normalizeName(input.name);
  const aeTitle = input.aeTitle === undefined ? current.aeTitle : normalizeAeTitle(input.aeTitle);
  const timeZone = input.timeZone === undefined ? current.timeZone : optionalTimeZone(input.timeZone);
  try {
    const { rows } = await db.query<SiteRow>(
      `UPDATE site SET name = $2, ae_title = $3, patient_put_creates = $4, mllp_allow_any_ip = $5, time_zone = $6, data_access_retention_days = $7,
              message_body_retention_days = $8, export_retention_hours = $9, refused_traffic_retention_days = $10, updated_at = now()
       WHERE id = $1 RETURNING ${columns}`,
      [
        siteId,
        name,
        aeTitle,
        input.patientPutCreates ?? current.policies.patientPutCreates,
        input.mllpAllowAnyIp ?? current.policies.mllpAllowAnyIp,
        timeZone,
        input.dataAccessRetentionDays === undefined ? current.dataAccessRetentionDays : validRetentionDays(input.dataAccessRetentionDays),
        input.messageBodyRetentionDays === undefined ? current.messageBodyRetentionDays : validBodyRetention(input.messageBodyRetentionDays),
        input.exportRetentionHours === undefined ? current.exportRetentionHours : validExportRetention(input.exportRetentionHours),
        input.refusedTrafficRetentionDays === undefined ? current.refusedTrafficRetentionDays : validRefusedTrafficRetention(input.refusedTrafficRetentionDays),
      ],
    );
    const site = toSite(rows[0]!);
    if (site.exportRetentionHours !== null && site.exportRetentionHours !== current.exportRetentionHours) await reviseExportExpiries(db, siteId, site.exportRetentionHours);
    noteCredentialChange(db);
    await recordAudit(db, { siteId, actor, action: 'site.updated', targetType: 'site', targetId: siteId, details: { ...input } });
    return site;
  } catch (error) {
    translateUniqueViolation(error);
  }
}

export async function findSiteById(db: Queryable, id: string): Promise<Site | undefined> {
  if (!isUuid(id)) return undefined;
  const { rows } = await db.query<SiteRow>(`SELECT ${columns} FROM site WHERE id = $1`, [id]);
  return rows[0] ? toSite(rows[0]) : undefined;
}

/**
 * The site whose AE title is this called AE title (trailing spaces are padding: PS3.8 9.3.2), in
 * its exact case; the upper() term lets the lookup use the any-case unique index (migration 0560).
 */
export async function findSiteByAeTitle(db: Queryable, aeTitle: string): Promise<Site | undefined> {
  const { rows } = await db.query<SiteRow>(`SELECT ${columns} FROM site WHERE upper(ae_title) = upper($1) AND ae_title = $1`, [aeTitle.trim()]);
  return rows[0] ? toSite(rows[0]) : undefined;
}

/** SITE on the command line: a site id or a site name (case-insensitive). */
export async function resolveSite(db: Queryable, idOrName: string): Promise<Site> {
  const byId = await findSiteById(db, idOrName);
  if (byId) return byId;
  const { rows } = await db.query<SiteRow>(`SELECT ${columns} FROM site WHERE lower(name) = lower($1)`, [idOrName.trim()]);
  if (!rows[0]) throw new DomainError('not-found', `no site with id or name "${idOrName}"`);
  return toSite(rows[0]);
}

export async function listSites(db: Queryable): Promise<Site[]> {
  const { rows } = await db.query<SiteRow>(`SELECT ${columns} FROM site ORDER BY lower(name)`);
  return rows.map(toSite);
}
