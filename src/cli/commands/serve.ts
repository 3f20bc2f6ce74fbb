import { loadConfig } from '../../config/env.ts';
import { startGateway } from '../../server/gateway.ts';
import { createLogger } from '../../server/logger.ts';
import type { CommandContext } from '../command.ts';

const shutdownDeadlineMs = 10_000;

export async function serveCommand({ json }: CommandContext): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const gateway = await startGateway(config, logger);
  for (const surface of gateway.listening) {
    logger.info({ surface: surface.name, protocol: surface.protocol, host: surface.host, port: surface.port }, `${surface.name} listening on ${surface.protocol}://${surface.host}:${surface.port}`);
  }
  if (!json) {
    process.stderr.write(
      `Clinical Gateway is running (data in ${config.dataDir}):\n${gateway.listening.map((s) => `  ${s.name.padEnd(13)} ${s.protocol}://${s.host}:${s.port}`).join('\n')}\n`,
    );
  }
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: no new connections, finishing in-flight work');
    const deadline = setTimeout(() => {
      logger.error('shutdown did not finish within 10 s; exiting');
      process.exit(1);
    }, shutdownDeadlineMs);
    deadline.unref();
    gateway.stop().then(
      () => {
        logger.info('stopped');
        process.exit(0);
      },
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}
