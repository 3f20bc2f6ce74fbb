import pg from 'pg';
import type { Database } from './database.ts';
import { isTransientDatabaseError } from './errors.ts';

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
 */
export interface PlannerStatisticsOptions {
  /** How often pg_stat_user_tables is read. */
  intervalMs?: number;
  /** No table is analysed for fewer changes than this. */
  minimumChanges?: number;
  log?: (level: 'info' | 'warn', details: object, message: string) => void;
}

export interface PlannerStatistics {
  /** One pass: analyses every table that needs it; returns their names. */
  refresh(): Promise<string[]>;
  stop(): Promise<void>;
}

const staleTablesSql = `
  SELECT s.relname AS table, s.n_mod_since_analyze::float8 AS changes, c.reltuples::float8 AS analysed_rows
    FROM pg_stat_user_tables s
    JOIN pg_class c ON c.oid = s.relid
   WHERE s.schemaname = current_schema()
     -- Only tables this role may analyse (PostgreSQL 15: the owner, or the database's owner);
     -- any other would be skipped with a warning and chosen again on every pass.
     AND (pg_has_role(c.relowner, 'USAGE')
          OR pg_has_role((SELECT d.datdba FROM pg_database d WHERE d.datname = current_database()), 'USAGE'))
     AND s.n_mod_since_analyze >= $1
     AND s.n_mod_since_analyze >= c.reltuples
   ORDER BY s.n_mod_since_analyze DESC`;

const lockNotAvailable = '55P03';

export function startPlannerStatistics(db: Database, options: PlannerStatisticsOptions = {}): PlannerStatistics {
  const minimumChanges = options.minimumChanges ?? 1_000;
  let running: Promise<string[]> | undefined;
  let stopped = false;

  const analyse = async (): Promise<string[]> => {
    const { rows } = await db.query<{ table: string; changes: number; analysed_rows: number }>(staleTablesSql, [minimumChanges]);
    const analysed: string[] = [];
    for (const row of rows) {
      if (stopped) break;
      // ANALYZE takes a lock that conflicts with autovacuum's on the same table; if one is at
      // work there, it is doing this job already, so give up rather than queue behind it.
      const done = await db
        .transaction(async (tx) => {
          await tx.query("SET LOCAL lock_timeout = '1s'");
          await tx.query(`ANALYZE ${pg.escapeIdentifier(row.table)}`);
          return true;
        })
        .catch((error: unknown) => {
          if ((error as { code?: unknown }).code === lockNotAvailable) return false;
          throw error;
        });
      if (!done) continue;
      analysed.push(row.table);
      options.log?.('info', { table: row.table, changes: row.changes, analysedRows: Math.max(row.analysed_rows, 0) }, 'planner statistics refreshed');
    }
    return analysed;
  };

  const refresh = (): Promise<string[]> => {
    running ??= analyse().finally(() => {
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
