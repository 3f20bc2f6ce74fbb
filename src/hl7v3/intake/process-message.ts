import type { FastifyBaseLogger } from 'fastify';
import { DomainError } from '../../domain/errors.ts';
import { DuplicateMessageError, findLoggedMessage, recordMessage, type MessageKey, type NewMessage } from '../../domain/messages/message-log.ts';
import type { SiteContext } from '../../domain/site-context.ts';
import type { Database, Transaction } from '../../storage/database.ts';
import { TransientStorageError, isTransientDatabaseError } from '../../storage/errors.ts';
import type { AcknowledgementDetail } from '../ack/acknowledgement.ts';
import { isHl7v3Message, messageIdKey, readEnvelope, type Envelope } from '../message/envelope.ts';
import { isSupportedInteraction, readPatientCommand, supportedInteractions } from '../message/interactions.ts';
import { defaultXmlLimits, parseXml, type XmlLimits } from '../xml/parse.ts';
import { unwrapSoap } from '../soap/soap-envelope.ts';
import { XmlRejection } from '../xml/rejection.ts';
import { answer, logProblems, statusOfStoredAck, type AnswerKind, type IntakeAnswer } from './answer.ts';
import { applyPatientCommand } from './apply-command.ts';

export interface IntakeOptions {
  /** The media type's charset parameter, when the sender gave one. */
  charset?: string;
  remoteAddress?: string;
  limits?: XmlLimits;
  logger?: FastifyBaseLogger;
  /** Set while new data is refused (free disk space below the floor): the error acknowledgement, nothing stored. */
  refusal?: Error;
}

/**
 * One HL7 v3 message from bytes to acknowledgement (IHE ITI-44 Patient Identity Feed):
 * parse safely, read the wrapper, answer a re-sent message id with the stored acknowledgement,
 * validate, then apply the patient change and log the message in one transaction. The answer
 * is built before commit but returned only after it (DESIGN.md section 2, durability).
 */
export async function processHl7v3Message(database: Database, site: SiteContext, raw: Buffer, options: IntakeOptions = {}): Promise<IntakeAnswer> {
  // Every answer below, whichever branch makes it, goes back in the transport the message came in.
  const transport: { soap?: NonNullable<IntakeAnswer['soap']> } = {};
  const result = await process(database, site, raw, options, transport);
  return transport.soap ? { ...result, soap: transport.soap } : result;
}

async function process(
  database: Database,
  site: SiteContext,
  raw: Buffer,
  options: IntakeOptions,
  transport: { soap?: NonNullable<IntakeAnswer['soap']> },
): Promise<IntakeAnswer> {
  let envelope: Envelope | undefined;
  try {
    let root;
    try {
      root = parseXml(raw, options.limits ?? defaultXmlLimits, options.charset);
    } catch (error) {
      if (!(error instanceof XmlRejection)) throw error;
      const detail: AcknowledgementDetail = {
        typeCode: 'E',
        code: 'SYN',
        text: error.message,
        ...(error.line !== undefined ? { location: `line ${error.line}, column ${error.column ?? 0}` } : {}),
      };
      return await logAlone(database, site, raw, options, undefined, error.reason === 'too-large' ? 'too-large' : 'not-a-message', [detail]);
    }
    const unwrapped = unwrapSoap(root);
    if (unwrapped.kind === 'soap') transport.soap = unwrapped.messageId ? { relatesTo: unwrapped.messageId } : {};
    if (unwrapped.kind === 'soap11' || (unwrapped.kind === 'soap' && !unwrapped.message)) {
      const detail: AcknowledgementDetail = {
        typeCode: 'E',
        code: 'SYN',
        text:
          unwrapped.kind === 'soap11'
            ? 'SOAP 1.1 envelopes are not accepted: IHE web services use SOAP 1.2 (http://www.w3.org/2003/05/soap-envelope)'
            : 'the SOAP Body holds no message',
        location: root.path,
      };
      return await logAlone(database, site, raw, options, undefined, 'not-a-message', [detail]);
    }
    if (unwrapped.kind === 'soap') root = unwrapped.message!;
    if (!isHl7v3Message(root)) {
      const detail: AcknowledgementDetail = {
        typeCode: 'E',
        code: 'SYN',
        text: `the root element <${root.name}> is not in the HL7 v3 namespace urn:hl7-org:v3, so this is not an HL7 v3 message`,
        location: root.path,
      };
      return await logAlone(database, site, raw, options, undefined, 'not-a-message', [detail]);
    }

    envelope = readEnvelope(root);
    const key = envelope.id ? messageKey(envelope) : undefined;
    if (key) {
      const earlier = await findLoggedMessage(database, site, key);
      if (earlier) return stored(earlier.ackText, earlier.ackCode);
    }
    // After the re-send look-up (a read: a copy already answered gets its answer), before any write.
    if (options.refusal) throw options.refusal;

    if (!isSupportedInteraction(envelope.rootName)) {
      const supported = Object.keys(supportedInteractions).join(', ');
      const detail: AcknowledgementDetail = {
        typeCode: 'E',
        code: 'NS200',
        text: `the interaction ${envelope.interactionId} is not supported; this service accepts ${supported}`,
        location: root.path,
      };
      return await logAlone(database, site, raw, options, envelope, 'unsupported', [detail, ...envelope.problems]);
    }

    const { command, problems } = readPatientCommand(root, envelope.rootName, site.timeZone);
    const details = [...envelope.problems, ...problems];
    if (!command || details.some((detail) => detail.typeCode === 'E')) {
      return await logAlone(database, site, raw, options, envelope, 'content-error', details);
    }

    const accepted = envelope;
    try {
      return await database.transaction(async (tx) => {
        const warnings = await applyPatientCommand(tx, site, command);
        const result = answer('accepted', accepted, [...details, ...warnings]);
        await record(tx, site, raw, options, accepted, result);
        return result;
      });
    } catch (error) {
      if (error instanceof DuplicateMessageError && key) {
        // A copy of this message committed first while this one was being applied.
        const earlier = await findLoggedMessage(database, site, key);
        if (earlier) return stored(earlier.ackText, earlier.ackCode);
      }
      if (error instanceof DomainError) {
        // The domain refused the change (a rule of the patient model): the message was well-formed
        // but cannot be applied. FHIRPath locations say which Patient element; others are not ours.
        const refused = error.issues.map<AcknowledgementDetail>((issue) => ({
          typeCode: 'E',
          code: 'SYN113',
          text: issue.message === error.message ? issue.message : `${error.message}: ${issue.message}`,
          ...(issue.location?.startsWith('Patient.') ? { location: issue.location } : {}),
        }));
        return await logAlone(database, site, raw, options, envelope, 'content-error', [...details, ...refused]);
      }
      throw error;
    }
  } catch (error) {
    if (error === options.refusal) {
      // Logged by the disk-space guard on entering and leaving the state, not per message.
      return answer('retry-later', envelope, [{ typeCode: 'E', code: 'INTERR', text: 'free disk space is below the service\'s floor; nothing was stored; send the message again later' }]);
    }
    if (error instanceof TransientStorageError || isTransientDatabaseError(error)) {
      options.logger?.warn({ err: error }, 'HL7 v3 message not processed: database unavailable');
      return answer('retry-later', envelope, [
        { typeCode: 'E', code: 'INTERR', text: 'the service cannot reach its database right now; nothing was stored; send the message again later' },
      ]);
    }
    options.logger?.error({ err: error }, 'HL7 v3 message failed unexpectedly');
    return answer('internal', envelope, [{ typeCode: 'E', code: 'INTERR', text: 'an internal error occurred; nothing was stored; send the message again later' }]);
  }
}

function messageKey(envelope: Envelope): MessageKey {
  return {
    protocol: 'hl7v3',
    sendingApplication: deviceKey(envelope.sender?.ids[0]),
    sendingFacility: deviceKey(envelope.sender?.organizationIds[0]),
    controlId: messageIdKey(envelope.id!),
  };
}

function deviceKey(id: { root: string; extension?: string } | undefined): string {
  return id ? messageIdKey(id) : '';
}

function stored(ackXml: string, ackCode: string): IntakeAnswer {
  return { statusCode: statusOfStoredAck(ackCode), typeCode: ackCode as IntakeAnswer['typeCode'], ackXml, details: [], duplicate: true };
}

/** Answers without changing clinical data, and logs the message and its answer. */
async function logAlone(
  database: Database,
  site: SiteContext,
  raw: Buffer,
  options: IntakeOptions,
  envelope: Envelope | undefined,
  kind: AnswerKind,
  details: AcknowledgementDetail[],
): Promise<IntakeAnswer> {
  const result = answer(kind, envelope, details);
  try {
    await database.transaction((tx) => record(tx, site, raw, options, envelope, result));
  } catch (error) {
    if (!(error instanceof DuplicateMessageError)) throw error;
    const earlier = envelope?.id ? await findLoggedMessage(database, site, messageKey(envelope)) : undefined;
    if (earlier) return stored(earlier.ackText, earlier.ackCode);
  }
  return result;
}

async function record(tx: Transaction, site: SiteContext, raw: Buffer, options: IntakeOptions, envelope: Envelope | undefined, result: IntakeAnswer): Promise<void> {
  const key = envelope?.id ? messageKey(envelope) : undefined;
  const entry: NewMessage = {
    protocol: 'hl7v3',
    transport: 'http',
    sendingApplication: key?.sendingApplication ?? '',
    sendingFacility: key?.sendingFacility ?? '',
    ...(key ? { controlId: key.controlId } : {}),
    messageType: envelope?.interactionId ?? '',
    outcome: result.typeCode === 'AA' ? 'processed' : result.typeCode === 'AE' ? 'error' : 'rejected',
    ackCode: result.typeCode,
    problems: logProblems(result.details),
    ackText: result.ackXml,
    raw,
    ...(options.remoteAddress ? { remoteAddress: options.remoteAddress } : {}),
  };
  await recordMessage(tx, site, entry);
}
