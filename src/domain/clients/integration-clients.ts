import { randomUUID } from 'node:crypto';
import { noteCredentialChange, type Queryable } from '../../storage/database.ts';
import { uniqueViolation } from '../../storage/errors.ts';
import { recordAudit } from '../audit/audit.ts';
import { DomainError } from '../errors.ts';
import type { Actor } from '../site-context.ts';
import { findSiteById, siteColumns, toSite, type Site, type SiteRow } from '../sites/sites.ts';
import { parseAllowedIps } from './ip-allow-list.ts';
import { optionalTimeZone } from '../time-zones/time-zone-name.ts';
import { refuseCrossSiteOverlap } from './registration-overlap.ts';
import { isUuid } from '../uuid.ts';

export const integrationProtocols = ['hl7-mllp'] as const;
export type IntegrationProtocol = (typeof integrationProtocols)[number];
/** MSH-18 spellings of the character sets the HL7 parser decodes. */
export const supportedCharsets = ['ASCII', '8859/1', 'UNICODE UTF-8'] as const;

export interface IntegrationClient {
  id: string;
  siteId: string;
  name: string;
  protocol: IntegrationProtocol;
  allowedIps: string[];
  sendingApplication: string | null;
  sendingFacility: string | null;
  defaultCharset: string;
  /** IANA time zone of the sender's local times; null: the site's applies. */
  timeZone: string | null;
  enabled: boolean;
  createdAt: Date;
  updatedAt: Date;
}

interface ClientRow {
  id: string;
  site_id: string;
  name: string;
  protocol: IntegrationProtocol;
  allowed_ips: string[];
  sending_application: string | null;
  sending_facility: string | null;
  default_charset: string;
  time_zone: string | null;
  enabled: boolean;
  created_at: Date;
  updated_at: Date;
}

const columns = 'id, site_id, name, protocol, allowed_ips, sending_application, sending_facility, default_charset, time_zone, enabled, created_at, updated_at';
const qualifiedColumns = (alias: string) => columns.split(', ').map((column) => `${alias}.${column}`).join(', ');

function toClient(row: ClientRow): IntegrationClient {
  return {
    id: row.id,
    siteId: row.site_id,
    name: row.name,
    protocol: row.protocol,
    allowedIps: row.allowed_ips,
    sendingApplication: row.sending_application,
    sendingFacility: row.sending_facility,
    defaultCharset: row.default_charset,
    timeZone: row.time_zone,
    enabled: row.enabled,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export interface ClientInput {
  name: string;
  protocol: string;
  allowedIps: string | string[];
  sendingApplication?: string | null;
  sendingFacility?: string | null;
  defaultCharset?: string;
  /** IANA time zone name; blank or null: the site's applies. */
  timeZone?: string | null;
  enabled?: boolean;
}

function validate(site: Site, input: ClientInput): Omit<ClientRow, 'id' | 'site_id' | 'created_at' | 'updated_at'> {
  const name = input.name.trim();
  if (name.length === 0 || name.length > 200) throw new DomainError('invalid', 'the client name must be 1 to 200 characters', [{ message: 'the client name must be 1 to 200 characters', location: 'name' }]);
  if (!(integrationProtocols as readonly string[]).includes(input.protocol)) {
    throw new DomainError('invalid', `unknown protocol "${input.protocol}": the only protocol is hl7-mllp`, [{ message: 'unknown protocol', location: 'protocol' }]);
  }
  const allowedIps = parseAllowedIps(input.allowedIps);
  if (allowedIps.includes('*') && !site.policies.mllpAllowAnyIp) {
    throw new DomainError('business-rule', 'this site\'s policy does not permit "*" (any IP address); list addresses or CIDR ranges', [{ message: '"*" is not permitted by the site policy', location: 'allowed_ips' }]);
  }
  const defaultCharset = input.defaultCharset?.trim() || 'UNICODE UTF-8';
  if (!(supportedCharsets as readonly string[]).includes(defaultCharset)) {
    throw new DomainError('invalid', `unsupported default character set "${defaultCharset}": use ${supportedCharsets.join(', ')}`, [{ message: 'unsupported character set', location: 'default_charset' }]);
  }
  return {
    name,
    protocol: input.protocol as IntegrationProtocol,
    allowed_ips: allowedIps,
    sending_application: input.sendingApplication?.trim() || null,
    sending_facility: input.sendingFacility?.trim() || null,
    default_charset: defaultCharset,
    time_zone: optionalTimeZone(input.timeZone),
    enabled: input.enabled ?? true,
  };
}

/** Who may let a registration overlap another site's: a service administrator (or the operator's CLI). */
export interface OverlapApproval {
  approveOverlap?: boolean;
}

/** Checks an enabled registration against other sites' and audits an approved overlap. */
async function checkOverlap(db: Queryable, siteId: string, values: ReturnType<typeof validate>, approval: OverlapApproval, actor: Actor, clientId: string): Promise<void> {
  if (!values.enabled) return;
  const scope = { allowedIps: values.allowed_ips, sendingApplication: values.sending_application, sendingFacility: values.sending_facility };
  const { overlaps } = await refuseCrossSiteOverlap(db, siteId, scope, approval.approveOverlap === true);
  if (overlaps) {
    await recordAudit(db, { siteId, actor, action: 'integration-client.overlap-approved', targetType: 'integration-client', targetId: clientId, details: { allowedIps: values.allowed_ips, sendingApplication: values.sending_application, sendingFacility: values.sending_facility } });
  }
}

function translateUniqueViolation(error: unknown): never {
  if (uniqueViolation(error)?.constraint === 'integration_client_name_key') {
    throw new DomainError('conflict', 'this site already has an integration client with this name', [{ message: 'name already used', location: 'name' }]);
  }
  throw error;
}

export async function createIntegrationClient(db: Queryable, siteId: string, input: ClientInput, actor: Actor, approval: OverlapApproval = {}): Promise<IntegrationClient> {
  const site = await findSiteById(db, siteId);
  if (!site) throw new DomainError('not-found', 'no such site');
  const values = validate(site, input);
  const id = randomUUID();
  await checkOverlap(db, siteId, values, approval, actor, id);
  try {
    const { rows } = await db.query<ClientRow>(
      `INSERT INTO integration_client (id, site_id, name, protocol, allowed_ips, sending_application, sending_facility, default_charset, enabled, time_zone)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING ${columns}`,
      [id, siteId, values.name, values.protocol, values.allowed_ips, values.sending_application, values.sending_facility, values.default_charset, values.enabled, values.time_zone],
    );
    const client = toClient(rows[0]!);
    noteCredentialChange(db);
    await recordAudit(db, { siteId, actor, action: 'integration-client.created', targetType: 'integration-client', targetId: client.id, details: { name: client.name, allowedIps: client.allowedIps } });
    return client;
  } catch (error) {
    translateUniqueViolation(error);
  }
}

export async function updateIntegrationClient(
  db: Queryable,
  siteId: string,
  clientId: string,
  input: Partial<ClientInput>,
  actor: Actor,
  approval: OverlapApproval = {},
): Promise<IntegrationClient> {
  const current = await findIntegrationClient(db, siteId, clientId);
  const site = await findSiteById(db, siteId);
  if (!current || !site) throw new DomainError('not-found', 'no such integration client');
  const values = validate(site, {
    name: input.name ?? current.name,
    protocol: input.protocol ?? current.protocol,
    allowedIps: input.allowedIps ?? current.allowedIps,
    sendingApplication: input.sendingApplication === undefined ? current.sendingApplication : input.sendingApplication,
    sendingFacility: input.sendingFacility === undefined ? current.sendingFacility : input.sendingFacility,
    defaultCharset: input.defaultCharset ?? current.defaultCharset,
    timeZone: input.timeZone === undefined ? current.timeZone : input.timeZone,
    enabled: input.enabled ?? current.enabled,
  });
  // Only a change of what the registration matches is checked: renaming a client whose overlap
  // was approved needs no new approval.
  const matchesMore =
    (values.enabled && !current.enabled) ||
    values.allowed_ips.join(',') !== current.allowedIps.join(',') ||
    values.sending_application !== current.sendingApplication ||
    values.sending_facility !== current.sendingFacility;
  if (matchesMore) await checkOverlap(db, siteId, values, approval, actor, clientId);
  try {
    const { rows } = await db.query<ClientRow>(
      `UPDATE integration_client SET name = $3, protocol = $4, allowed_ips = $5, sending_application = $6, sending_facility = $7,
         default_charset = $8, enabled = $9, time_zone = $10, updated_at = now()
       WHERE site_id = $1 AND id = $2 RETURNING ${columns}`,
      [siteId, clientId, values.name, values.protocol, values.allowed_ips, values.sending_application, values.sending_facility, values.default_charset, values.enabled, values.time_zone],
    );
    noteCredentialChange(db);
    await recordAudit(db, { siteId, actor, action: 'integration-client.updated', targetType: 'integration-client', targetId: clientId, details: { ...input } });
    return toClient(rows[0]!);
  } catch (error) {
    translateUniqueViolation(error);
  }
}

export async function findIntegrationClient(db: Queryable, siteId: string, clientId: string): Promise<IntegrationClient | undefined> {
  if (!isUuid(clientId)) return undefined;
  const { rows } = await db.query<ClientRow>(`SELECT ${columns} FROM integration_client WHERE site_id = $1 AND id = $2`, [siteId, clientId]);
  return rows[0] ? toClient(rows[0]) : undefined;
}

export async function listIntegrationClients(db: Queryable, siteId: string): Promise<IntegrationClient[]> {
  const { rows } = await db.query<ClientRow>(`SELECT ${columns} FROM integration_client WHERE site_id = $1 ORDER BY lower(name)`, [siteId]);
  return rows.map(toClient);
}

/** An enabled MLLP client and the site its messages belong to. */
export interface MllpRegistration {
  client: IntegrationClient;
  site: Site;
}

// The site's columns share names with the client's (id, name, created_at), so they come back prefixed.
const sitePrefix = 'site.';
function siteColumnsAs(alias: string, prefix: string): string {
  return siteColumns(alias)
    .split(', ')
    .map((column) => `${column} AS "${prefix}${column.slice(alias.length + 1)}"`)
    .join(', ');
}

/**
 * Every enabled MLLP client of every site, with its site, in one statement. Which of them admit a
 * peer is decided in memory (ipMatches), and which one a message belongs to by MSH-3/MSH-4
 * (matchesSender); src/domain/clients/mllp-registrations.ts keeps the result between changes.
 */
export async function readMllpRegistrations(db: Queryable): Promise<MllpRegistration[]> {
  const { rows } = await db.query<Record<string, unknown>>({
    name: 'mllp-registrations',
    text: `SELECT ${qualifiedColumns('c')}, ${siteColumnsAs('s', sitePrefix)}
             FROM integration_client c JOIN site s ON s.id = c.site_id
            WHERE c.protocol = 'hl7-mllp' AND c.enabled`,
  });
  return rows.map((row) => {
    const site: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(row)) if (key.startsWith(sitePrefix)) site[key.slice(sitePrefix.length)] = value;
    return { client: toClient(row as unknown as ClientRow), site: toSite(site as unknown as SiteRow) };
  });
}

/** Where a client names a sending application or facility, MSH-3 / MSH-4 (HD.1) must equal it. */
export function matchesSender(client: IntegrationClient, sendingApplication: string, sendingFacility: string): boolean {
  const same = (expected: string | null, actual: string) => expected === null || expected === actual.split('^')[0]!.trim() || expected === actual.trim();
  return same(client.sendingApplication, sendingApplication) && same(client.sendingFacility, sendingFacility);
}

/** CLIENT on the command line: one of the site's integration clients, by id or name (case-insensitive). */
export async function resolveIntegrationClient(db: Queryable, siteId: string, idOrName: string): Promise<IntegrationClient> {
  const byId = await findIntegrationClient(db, siteId, idOrName);
  if (byId) return byId;
  const { rows } = await db.query<ClientRow>(`SELECT ${columns} FROM integration_client WHERE site_id = $1 AND lower(name) = lower($2)`, [siteId, idOrName.trim()]);
  if (!rows[0]) throw new DomainError('not-found', `the site has no integration client with id or name "${idOrName}"`);
  return toClient(rows[0]);
}
