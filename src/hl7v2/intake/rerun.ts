/**
 * Runs a logged HL7 v2 message through the intake again for reprocessing
 * (src/domain/messages/message-reprocess.ts), with the configuration as it is now: an MLLP
 * message's sender is authorized again from its address and MSH-3/MSH-4, and that client's
 * current default charset and time zone apply. An HTTP message's Content-Type charset was not
 * kept: MSH-18, or UTF-8, applies.
 */
import { DomainError } from '../../domain/errors.ts';
import type { MessageRerun } from '../../domain/messages/message-reprocess.ts';
import type { Database } from '../../storage/database.ts';
import { supportedCharset, type SupportedCharset } from '../er7/charset.ts';
import { authorizeSender } from '../mllp/authorize.ts';
import { ingestHl7v2, type IntakeLogger } from './intake.ts';

export function hl7v2Rerun(db: Database, logger?: IntakeLogger): MessageRerun {
  return async (site, message) => {
    if (message.raw === null) throw new DomainError('business-rule', "the message's body was removed by the site's message body retention: there is nothing to run again");
    let defaultCharset: SupportedCharset = 'UNICODE UTF-8';
    let clientTimeZone: string | null = null;
    if (message.transport === 'mllp' && message.remoteAddress) {
      const authorization = await authorizeSender(db, message.remoteAddress, message.sendingApplication, message.sendingFacility);
      if (authorization.kind === 'refused' || authorization.site.id !== site.siteId) {
        throw new DomainError('business-rule', `no integration client of this site admits the sender now: ${authorization.kind === 'refused' ? authorization.reason : 'it belongs to another site'}`);
      }
      defaultCharset = supportedCharset(authorization.client.defaultCharset) ?? 'UNICODE UTF-8';
      clientTimeZone = authorization.client.timeZone;
    }
    await ingestHl7v2(
      db,
      {
        raw: message.raw,
        site,
        defaultCharset,
        clientTimeZone,
        origin: { transport: message.transport, ...(message.remoteAddress ? { remoteAddress: message.remoteAddress } : {}), reprocessOf: message.id },
      },
      logger,
    );
  };
}
