import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/env.ts';
import type { MessageRerun } from '../domain/messages/message-reprocess.ts';
import type { Database } from '../storage/database.ts';

/** What the composition root hands to every surface. Nothing else is shared between surfaces. */
export interface Services {
  database: Database;
  config: GatewayConfig;
  logger: Logger;
  /** HL7 v2 intake for reprocessing failed messages from the admin surface; absent: not offered. */
  messageRerun?: MessageRerun;
}
