import cluster from 'node:cluster';
import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import pg from 'pg';

/**
 * Baselines (a) and (b) of issue 8: the same HTTP framework (Fastify) and driver (node-postgres,
 * same pool size, named prepared statements) against the same PostgreSQL server, with no FHIR
 * logic: (a) the primary-key select of a read, (b) a single-row insert of the same JSON. What the
 * gateway adds on top of this floor is its own cost. Run as a child process of the bench.
 *
 * With BENCH_BASELINE_WORKERS above 1 it runs as the service does with CG_WORKERS: Node's cluster
 * module, that many worker processes on one listening socket, each with the pool share the
 * service's workers get (src/server/supervisor.ts).
 */
const port = Number(process.env.BENCH_BASELINE_PORT);
const siteId = process.env.BENCH_SITE_ID!;
const workers = Math.max(1, Number(process.env.BENCH_BASELINE_WORKERS ?? 1));

/**
 * The service's share per worker (workerPoolSize in src/server/supervisor.ts: 20 a node, at
 * least 4 a worker), not imported, so that this baseline loads none of the service's modules.
 */
function poolSize(count: number): number {
  return count > 1 ? Math.max(4, Math.ceil(20 / count)) : 20;
}

if (workers > 1 && cluster.isPrimary) {
  let listening = 0;
  for (let i = 0; i < workers; i++) {
    cluster.fork().on('listening', () => {
      if (++listening === workers) process.stdout.write('listening\n');
    });
  }
  cluster.on('exit', () => process.exit(1));
  process.on('SIGTERM', () => {
    cluster.removeAllListeners('exit');
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
    process.exit(0);
  });
} else {
  await serve();
}

async function serve(): Promise<void> {
  const pool = new pg.Pool({ connectionString: process.env.BENCH_DATABASE_URL, max: poolSize(workers), application_name: 'clinical-gateway-bench-baseline' });

  const app = Fastify({ logger: false, bodyLimit: 1024 * 1024 });
  app.addContentTypeParser('application/fhir+json', { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, JSON.parse(body as string));
    } catch (error) {
      done(error as Error, undefined);
    }
  });

  app.get<{ Params: { id: string } }>('/fhir/Patient/:id', async (request, reply) => {
    const { rows } = await pool.query<{ content: unknown }>({
      name: 'baseline-read',
      text: 'SELECT content FROM clinical_resource WHERE site_id = $1 AND resource_type = $2 AND id = $3',
      values: [siteId, 'Patient', request.params.id],
    });
    if (rows.length === 0) return reply.code(404).send({ resourceType: 'OperationOutcome' });
    return reply.type('application/fhir+json').send(rows[0]!.content);
  });

  app.post('/fhir/Patient', async (request, reply) => {
    const resource = { ...(request.body as Record<string, unknown>), id: randomUUID() };
    await pool.query({ name: 'baseline-insert', text: 'INSERT INTO bench.baseline_resource (id, content) VALUES ($1, $2)', values: [resource.id, resource] });
    return reply.code(201).type('application/fhir+json').send(resource);
  });

  await app.listen({ host: '127.0.0.1', port });
  if (cluster.isPrimary) process.stdout.write('listening\n');
  process.on('SIGTERM', () => {
    void app.close().then(() => pool.end()).then(() => process.exit(0));
  });
}
