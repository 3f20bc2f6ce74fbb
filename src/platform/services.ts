import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/env.ts';
import type { TrafficCounter } from '../domain/activity/traffic-counter.ts';
import type { MessageRerun } from '../domain/messages/message-reprocess.ts';
import type { Database } from '../storage/database.ts';
import type { DiskSpaceGuard } from './disk-space/disk-space-guard.ts';
import type { GatewayMetrics } from './metrics/gateway-metrics.ts';

/** What the composition root hands to every surface. Nothing else is shared between surfaces. */
export interface Services {
  database: Database;
  config: GatewayConfig;
  logger: Logger;
  /** Prometheus metrics of this process (src/platform/metrics); absent where nothing scrapes (tests, the CLI). */
  metrics?: GatewayMetrics;
  /** HL7 v2 intake for reprocessing failed messages from the admin surface; absent: not offered. */
  messageRerun?: MessageRerun;
  /** Requests per API key and DICOM traffic per calling AE title, for the activity dashboard; absent: not counted. */
  traffic?: TrafficCounter;
  /** The free-space floor's last sample; absent where nothing samples it (tests, the CLI): never refused. */
  diskSpace?: DiskSpaceGuard;
}
