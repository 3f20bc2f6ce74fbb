import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/env.ts';
import type { Database } from '../storage/database.ts';

/** What the composition root hands to every surface. Nothing else is shared between surfaces. */
export interface Services {
  database: Database;
  config: GatewayConfig;
  logger: Logger;
}
