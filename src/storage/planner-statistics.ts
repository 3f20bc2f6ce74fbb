import pg from 'pg';
import type { Database } from './database.ts';
import { isTransientDatabaseError } from './errors.ts';
import { onceAcrossNodes, runIfNoOtherNodeIs } from './once-across-nodes.ts';

/**
 * Keeps PostgreSQL's planner statistics up with tables that grow faster than autovacuum looks
 * at them. Autovacuum analyses a table once 10% of it has changed, and visits a database once a
 * minute: a fresh installation or a newly connected site loading a thousand messages a second
 * grows a table many times over in between. Without statistics the planner's estimate for any
 * site-scoped index clamps to one row, so it picks between the business-identifier index and,
 * say, the birth-date index by a tie, and the wrong one scans every row of the site per lookup
 * (measured: 4 ms per lookup at 12,700 rows, 5 per HL7 v2 result). Here a table is analysed
 * as soon as its changes since the last analysis reach the number of rows that analysis saw
 * (the statistics describe at most half the table), and at least `minimumChanges`: a handful of
 * analyses while a table doubles its way up, then autovacuum's 10% rule takes over.
 *
 * A large table has a second blind spot: a site new to it. Its rows are too few a share to make
 * the first rule fire (140,000 changes on the bench's 1.4 million resources), yet the site is
 * absent from the site_id statistics, so the planner estimates it at one row and ties the same
 * way (measured: 2.1 ms instead of 0.02 ms per business-identifier lookup at 3,000 patients, and
 * growing with the site). So a table is also analysed when a site the statistics do not list
 * has reached `max(minimumChanges, rows / 1000)` rows in it: enough to be sampled about thirty
 * times by the next analysis (30,000 rows at the default statistics target), so that the site is
 * listed afterwards. Sites are only counted up to that bound, through their site-led indexes, and
 * only on tables with that many changes since their last analysis.
 *
 * A table never analysed nor vacuumed (a fresh database) is the worst case and is analysed after
 * only `firstAnalysisChanges` changes (autovacuum's own base threshold). Its indexes still
 * carry the zero row count CREATE INDEX gave them on the empty table, so every partial index (the
 * birth-date one among them) looks empty and costs one row for any site: the business-identifier
 * lookup went through the birth-date index and filtered every patient of the site, and a FHIR
 * identifier search walked the site's patients with a token probe each (measured on a fresh
 * database at 3,000 patients: 1.2 ms and 7-13 s, against 0.01 ms and 0.05 ms after ANALYZE).
 * Waiting for `minimumChanges` left that plan in place for the first thousand rows. The first
 * pass is cheap (the three clinical tables at 60 patients: 46 ms on a loaded 2-core machine), and
 * an analysis at 50 rows already gives the right plans at 1,050 (measured), when the first rule
 * fires again. Only never-analysed tables: one analysed empty, as a queue that is empty most of
 * the time, would otherwise be analysed again every 50 changes.
 */
export interface PlannerStatisticsOptions {
  /** How often pg_stat_user_tables is read. */
  intervalMs?: number;
  /** No table is analysed for fewer changes than this, except one never analysed. */
  minimumChanges?: number;
  /** Changes after which a table never analysed (nor vacuumed) is analysed. */
  firstAnalysisChanges?: number;
  log?: (level: 'info' | 'warn', details: object, message: string) => void;
}

export interface PlannerStatistics {
  /** One pass: analyses every table that needs it; returns their names. */
  refresh(): Promise<string[]>;
  stop(): Promise<void>;
}

/** Below this share of a table a site is not expected in the table's most-common site_id values. */
const sampledShare = 1_000;

/**
 * Every table this role may analyse with at least $1 changes since its last analysis (at least $2
 * when it was never analysed nor vacuumed: reltuples -1), with its
 * most-common site_id values where it has site_id statistics and the role can read the site list
 * (null otherwise: the second rule does not apply).
 */
const changedTablesSql = `
  SELECT s.relname AS table, s.n_mod_since_analyze::float8 AS changes, c.reltuples::float8 AS analysed_rows,
         CASE WHEN st.attname IS NOT NULL AND has_table_privilege(to_regclass('site'), 'SELECT')
              THEN coalesce(st.most_common_vals::text, '{}') END AS listed_sites
    FROM pg_stat_user_tables s
    JOIN pg_class c ON c.oid = s.relid
    LEFT JOIN pg_stats st ON st.schemaname = s.schemaname AND st.tablename = s.relname AND st.attname = 'site_id'
   WHERE s.schemaname = current_schema()
     -- Only tables this role may analyse (PostgreSQL 15: the owner, or the database's owner);
     -- any other would be skipped with a warning and chosen again on every pass.
     AND (pg_has_role(c.relowner, 'USAGE')
          OR pg_has_role((SELECT d.datdba FROM pg_database d WHERE d.datname = current_database()), 'USAGE'))
     AND (s.n_mod_since_analyze >= $1 OR (c.reltuples < 0 AND s.n_mod_since_analyze >= $2))
   ORDER BY s.n_mod_since_analyze DESC`;

/** Sites of the site list with at least $2 rows in the table and not among $1, counted up to $2. */
function unlistedSitesSql(table: string): string {
  return `SELECT site.id FROM site
           WHERE site.id <> ALL ($1::uuid[])
             AND (SELECT count(*) FROM (SELECT FROM ${pg.escapeIdentifier(table)} t WHERE t.site_id = site.id LIMIT $2) counted) >= $2`;
}

const lockNotAvailable = '55P03';

interface TableToAnalyse {
  table: string;
  /** Set when the table is analysed for a site missing from its statistics. */
  site?: { id: string; analysedRows: number };
  details: object;
}

export function startPlannerStatistics(db: Database, options: PlannerStatisticsOptions = {}): PlannerStatistics {
  const minimumChanges = options.minimumChanges ?? 1_000;
  const firstAnalysisChanges = Math.min(options.firstAnalysisChanges ?? 50, minimumChanges);
  let running: Promise<string[]> | undefined;
  let stopped = false;

  // Per table and site the rule above fired for, the rows the table had then: a site that is
  // still not listed afterwards (a table with more sites than the statistics keep) is tried
  // again only once the table has doubled, not on every pass.
  const analysedForSite = new Map<string, number>();

  const tablesToAnalyse = async (): Promise<TableToAnalyse[]> => {
    const { rows: changed } = await db.query<{ table: string; changes: number; analysed_rows: number; listed_sites: string | null }>(changedTablesSql, [
      minimumChanges,
      firstAnalysisChanges,
    ]);
    const chosen: TableToAnalyse[] = changed
      .filter((row) => row.changes >= row.analysed_rows)
      .map((row) => ({ table: row.table, details: { changes: row.changes, analysedRows: Math.max(row.analysed_rows, 0) } }));
    for (const candidate of changed) {
      if (candidate.changes >= candidate.analysed_rows || candidate.listed_sites === null) continue;
      // A site can only have grown past the bound since the last analysis if that many rows changed.
      const bound = Math.ceil(Math.max(minimumChanges, candidate.analysed_rows / sampledShare));
      if (candidate.changes < bound) continue;
      const listedSites = candidate.listed_sites;
      const rows = await db.transaction(async (tx) => {
        // The site is a parameter of the count, estimated at the table's average share, for
        // which a sequential scan looks cheap; it reads the whole table when the site has fewer
        // rows than the bound (135 ms on 2.9 million token rows), where an index reads at most the bound.
        await tx.query('SET LOCAL enable_seqscan = off');
        await tx.query('SET LOCAL enable_bitmapscan = off');
        return (await tx.query<{ id: string }>(unlistedSitesSql(candidate.table), [listedSites, bound])).rows;
      });
      const site = rows
        .map((row) => row.id)
        .find((id) => {
          const before = analysedForSite.get(`${candidate.table}|${id}`);
          return before === undefined || candidate.analysed_rows >= 2 * before;
        });
      if (site === undefined) continue;
      chosen.push({
        table: candidate.table,
        site: { id: site, analysedRows: candidate.analysed_rows },
        details: { unlistedSite: site, siteRowsAtLeast: bound, analysedRows: Math.max(candidate.analysed_rows, 0) },
      });
    }
    return chosen;
  };

  const analyse = async (): Promise<string[]> => {
    const analysed: string[] = [];
    for (const { table, site, details } of await tablesToAnalyse()) {
      if (stopped) break;
      // ANALYZE takes a lock that conflicts with autovacuum's on the same table; if one is at
      // work there, it is doing this job already, so give up rather than queue behind it.
      const done = await db
        .transaction(async (tx) => {
          await tx.query("SET LOCAL lock_timeout = '1s'");
          await tx.query(`ANALYZE ${pg.escapeIdentifier(table)}`);
          return true;
        })
        .catch((error: unknown) => {
          if ((error as { code?: unknown }).code === lockNotAvailable) return false;
          throw error;
        });
      if (!done) continue;
      if (site) analysedForSite.set(`${table}|${site.id}`, site.analysedRows);
      analysed.push(table);
      options.log?.('info', { table, ...details }, 'planner statistics refreshed');
    }
    return analysed;
  };

  // One node at a time: the statistics are the database's, and every node would analyse the same tables.
  const refresh = (): Promise<string[]> => {
    running ??= runIfNoOtherNodeIs(db, onceAcrossNodes.plannerStatistics, analyse).then((analysed) => analysed ?? []).finally(() => {
      running = undefined;
    });
    return running;
  };

  const timer = setInterval(() => {
    refresh().catch((error: unknown) => {
      // An outage is reported by the surfaces and readyz, not once every pass from here.
      if (!isTransientDatabaseError(error)) options.log?.('warn', { err: error }, 'refreshing planner statistics failed');
    });
  }, options.intervalMs ?? 2_000);
  timer.unref();

  return {
    refresh,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running?.catch(() => {});
    },
  };
}
