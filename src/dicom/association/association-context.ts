import type { Logger } from 'pino';
import type { SiteContext } from '../../domain/site-context.ts';
import type { Database } from '../../storage/database.ts';
import type { StorageLayout } from '../storage/layout.ts';
import type { StoreLimits } from '../storage/store-limits.ts';

/** What a DIMSE service handler knows about the association it serves. */
export interface AssociationContext {
  /** The site the called AE title selected; its actor records the calling AE and remote IP. */
  site: SiteContext;
  database: Database;
  logger: Logger;
  layout: StorageLayout;
  storeLimits: StoreLimits;
  callingAeTitle: string;
  remoteAddress: string;
}
