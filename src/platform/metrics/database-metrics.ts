import type pg from 'pg';
import { Gauge, Histogram, type Registry } from 'prom-client';
import type { Database } from '../../storage/database.ts';

/** From 1 ms to 30 s: a primary-key read to a long transaction or search. */
const holdBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10, 30];

/**
 * The two node-postgres pools of the process (`main` for reads, writes and transactions, `search`
 * for FHIR searches: src/storage/database.ts): connections open, idle and waited for, read at
 * scrape time, and how long each checked-out connection is held, from the pool's own acquire and
 * release events. A connection is held for one statement sent through the pool, or for one
 * transaction or search from BEGIN to COMMIT, so this is the database time of each unit of work,
 * measured without wrapping the storage layer's queries.
 */
export function observeDatabasePools(registry: Registry, database: Database): void {
  const pools: Record<string, pg.Pool> = { main: database.pool, search: database.searchPool };
  const gauge = (name: string, help: string, read: (pool: pg.Pool) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['pool'],
      registers: [registry],
      collect() {
        for (const [pool, instance] of Object.entries(pools)) this.set({ pool }, read(instance));
      },
    });
  gauge('cg_db_pool_connections', 'Connections the pool holds open (busy and idle)', (pool) => pool.totalCount);
  gauge('cg_db_pool_idle_connections', 'Open connections of the pool not checked out', (pool) => pool.idleCount);
  gauge('cg_db_pool_waiting_requests', 'Requests waiting for a connection of the pool', (pool) => pool.waitingCount);
  const held = new Histogram({
    name: 'cg_db_connection_hold_seconds',
    help: 'How long a connection was checked out of the pool: one statement through the pool, or one transaction or search',
    labelNames: ['pool'],
    buckets: holdBuckets,
    registers: [registry],
  });
  for (const [pool, instance] of Object.entries(pools)) {
    const since = new WeakMap<pg.PoolClient, number>();
    instance.on('acquire', (client) => since.set(client, performance.now()));
    instance.on('release', (_error: Error | undefined, client: pg.PoolClient) => {
      const started = since.get(client);
      if (started === undefined) return;
      since.delete(client);
      held.observe({ pool }, (performance.now() - started) / 1000);
    });
  }
}
