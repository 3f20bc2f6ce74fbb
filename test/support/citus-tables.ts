/**
 * How each table of the schema would live in a Citus cluster. Every table with a site_id column
 * is clinical, distributed by site_id, unless it is named below with the reason; every table
 * without one is named below as a reference table (copied to every node) or a node-local one.
 * The Citus readiness tests (test/storage/citus-*.test.ts) fail on a table that is in neither
 * list, so a new table is classified when it is made.
 */
export const referenceTables: ReadonlyMap<string, string> = new Map([
  ['site', 'the tenants themselves: every distributed table keys to it (DESIGN.md section 2: sites are the reference table)'],
  ['schema_migration', 'which migrations ran; one row per migration, read and written only by the migration runner'],
  ['fhir_paging_secret', 'one row: the key signing FHIR paging tokens for every site'],
  ['admin_session', "a signed-in user's session, found by its hash before any site is known"],
  ['admin_sign_in_throttle', 'failed sign-ins per e-mail and per address, counted before any site is known'],
  ['automation_token', "a service administrator's token for the admin JSON API: about the service, not any site"],
  ['service_node', 'the lease of each running node id; a few rows, about the service, not any site'],
  ['service_worker', 'a heartbeat per serving process of each node; a few rows, about the service, not any site'],
]);

/**
 * Tables that carry a site_id but are looked up before the site is known, so they cannot be
 * distributed by it: they are reference tables too (small, written rarely). Each is named with
 * the lookup that needs every site's rows.
 */
export const serviceTablesWithSiteColumn: ReadonlyMap<string, string> = new Map([
  ['app_user', 'sign-in finds a user by e-mail, unique across the service; service admins have no site (site_id null)'],
  ['api_key', 'a request is authenticated by its key prefix, which is what tells the site'],
  ['integration_client', 'an MLLP connection is matched to a client by its remote address and MSH-3/4 across all sites'],
  ['audit_event', 'service-wide administrative actions (sites, service admins) have no site (site_id null)'],
  ['dicomweb_viewing_token', "a browser's DICOMweb request is authenticated by the token's hash, which is what tells the site"],
  ['refused_traffic', 'refusals are recorded before any site is known (an address no client admits, an unknown AE title or key prefix: site_id null)'],
]);
