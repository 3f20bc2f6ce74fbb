/**
 * DIMSE message assembly and dispatch over one association (PS3.7 section 6, PS3.8 annex E):
 * command fragments are collected (a command set is small and bounded), dataset fragments go
 * straight to the service's receiver as they arrive, and each complete request gets its response.
 * Operations are not asynchronous (PS3.7 D.3.3.3: without negotiation, one outstanding request).
 */
import { commandField, decodeCommandSet, noDataSet, tag, type CommandSet } from '../dimse/command-set.ts';
import type { DimseResult } from '../dimse/dimse-result.ts';
import { encodeResponse, toPDataPdus } from '../dimse/response.ts';
import { isCompleted, status } from '../dimse/status.ts';
import { maxSmallDatasetLength } from '../../storage/dicom/dataset/small-dataset.ts';
import { beginStore, discardingReceiver, type DatasetReceiver } from '../services/c-store.ts';
import { handleMpps } from '../services/mpps.ts';
import { runQueryRetrieve } from '../services/query-retrieve/run.ts';
import { verificationSopClass } from '../../storage/dicom/uids.ts';
import { abortReason, UpperLayerError } from '../upper-layer/pdu-types.ts';
import { parsePdvs } from '../upper-layer/pdv.ts';
import type { AssociationContext } from './association-context.ts';
import type { AcceptedContext } from './negotiate.ts';
import { StoreResponses, type OperationChannel } from './operation-channel.ts';

const maxCommandLength = 64 * 1024;

interface Message {
  context: AcceptedContext;
  commandFragments: Buffer[];
  commandLength: number;
  command?: CommandSet;
  receiver?: Receiver;
  datasetBytes: number;
}

/** A receiver whose request is answered later by an operation of its own (undefined result). */
type Receiver = Omit<DatasetReceiver, 'finish'> & { finish(): Promise<DimseResult | undefined> };

interface RunningOperation {
  messageId: number;
  cancel: AbortController;
  storeResponses: StoreResponses;
}

/** What an association did, for the one line logged when it ends. */
export interface ExchangeSummary {
  /** C-STORE requests answered with success. */
  stored: number;
  /** Data set bytes of those requests. */
  storedBytes: number;
  /** Requests answered with any other status. */
  refused: number;
}

export class MessageExchange {
  readonly #association: AssociationContext;
  readonly #contexts: Map<number, AcceptedContext>;
  readonly #peerMaxPduLength: number;
  readonly #write: (pdu: Buffer) => Promise<void>;
  #message: Message | undefined;
  #operation: RunningOperation | undefined;
  #summary: ExchangeSummary = { stored: 0, storedBytes: 0, refused: 0 };

  /** `write` sends PDUs from an operation running beside the read loop, waiting for the socket. */
  constructor(association: AssociationContext, contexts: Map<number, AcceptedContext>, peerMaxPduLength: number, write: (pdu: Buffer) => Promise<void>) {
    this.#association = association;
    this.#contexts = contexts;
    this.#peerMaxPduLength = peerMaxPduLength;
    this.#write = write;
  }

  /** A request is partly received or being processed. */
  get busy(): boolean {
    return this.#message !== undefined || this.#operation !== undefined;
  }

  /** A C-FIND, C-GET or C-MOVE is running: the requestor may rightly stay silent meanwhile. */
  get operating(): boolean {
    return this.#operation !== undefined;
  }

  get summary(): Readonly<ExchangeSummary> {
    return this.#summary;
  }

  /** Takes one P-DATA-TF body (in parts); returns the PDUs to send back (responses completed by it). */
  async receive(body: Buffer[]): Promise<Buffer[]> {
    const out: Buffer[] = [];
    for (const pdv of parsePdvs(body)) {
      const context = this.#contexts.get(pdv.contextId);
      if (!context) throw new UpperLayerError(`PDV on presentation context ${pdv.contextId}, which was not accepted`, abortReason.invalidPduParameterValue);
      const message = this.#message;
      if (message && message.context.id !== pdv.contextId) {
        throw new UpperLayerError('a message switched presentation context', abortReason.invalidPduParameterValue);
      }
      if (pdv.isCommand) {
        if (message?.command) throw new UpperLayerError('command fragment where a data set was expected', abortReason.unexpectedPduParameter);
        const current = message ?? (this.#message = { context, commandFragments: [], commandLength: 0, datasetBytes: 0 });
        current.commandFragments.push(...pdv.fragment);
        current.commandLength += pdv.fragmentLength;
        if (current.commandLength > maxCommandLength) throw new UpperLayerError('command set too large', abortReason.invalidPduParameterValue);
        if (pdv.isLast) out.push(...(await this.#commandComplete(current)));
      } else {
        if (!message?.receiver) throw new UpperLayerError('data set fragment without a command announcing it', abortReason.unexpectedPduParameter);
        message.datasetBytes += pdv.fragmentLength;
        for (const piece of pdv.fragment) await message.receiver.write(piece);
        if (pdv.isLast) {
          const receiver = message.receiver;
          message.receiver = undefined; // finished: no longer abandoned if the connection drops now
          out.push(...this.#respond(message, await receiver.finish()));
        }
      }
    }
    return out;
  }

  /** Cleans up a transfer cut short (A-ABORT, closed connection, protocol error). */
  async abandon(): Promise<void> {
    const operation = this.#operation;
    if (operation) {
      operation.cancel.abort();
      operation.storeResponses.close(new Error('the association ended'));
    }
    const receiver = this.#message?.receiver;
    this.#message = undefined;
    if (receiver) await receiver.abandon();
  }

  async #commandComplete(message: Message): Promise<Buffer[]> {
    const command = decodeCommandSet(Buffer.concat(message.commandFragments));
    message.command = command;
    message.commandFragments = [];
    const field = command.uint16(tag.commandField) ?? 0;
    const hasDataSet = command.uint16(tag.commandDataSetType) !== noDataSet;
    const operation = this.#operation;
    if (field === commandField.cStoreRsp && operation && !hasDataSet) {
      this.#message = undefined; // a C-GET sub-operation's answer
      operation.storeResponses.push(command);
      return [];
    }
    if (field & 0x8000) throw new UpperLayerError('a response command sent to the SCP', abortReason.unexpectedPduParameter);
    if (field === commandField.cCancelRq) {
      // PS3.7 9.3.2.3: C-CANCEL has no response; one for an operation no longer running is moot.
      if (operation && command.uint16(tag.messageIdBeingRespondedTo) === operation.messageId) operation.cancel.abort();
      this.#message = undefined;
      return [];
    }
    // PS3.7 D.3.3.3: without asynchronous operations negotiated, one request at a time.
    if (operation) throw new UpperLayerError('a request while a C-FIND, C-GET or C-MOVE is still running', abortReason.unexpectedPduParameter);
    if (hasDataSet) {
      message.receiver = await this.#receiverFor(message.context, command, field);
      return [];
    }
    return this.#respond(message, await this.#withoutDataSet(message.context, command, field));
  }

  async #receiverFor(context: AcceptedContext, command: CommandSet, field: number): Promise<Receiver> {
    switch (field) {
      case commandField.cFindRq:
      case commandField.cGetRq:
      case commandField.cMoveRq:
        return this.#collect(async (identifier) => this.#start(context, command, identifier));
      case commandField.cStoreRq:
        return beginStore(this.#association, context, command);
      case commandField.nCreateRq:
      case commandField.nSetRq:
        return this.#collect((dataset) => handleMpps(this.#association, context, command, field === commandField.nCreateRq ? 'create' : 'update', dataset));
      default:
        return discardingReceiver({ status: status.unrecognizedOperation, errorComment: 'Operation not supported' });
    }
  }

  async #withoutDataSet(context: AcceptedContext, command: CommandSet, field: number): Promise<DimseResult> {
    switch (field) {
      case commandField.cEchoRq:
        // PS3.4 A.4: C-ECHO belongs to the Verification SOP Class.
        return context.service === 'verification' ? { status: status.success } : { status: status.sopClassNotSupported, errorComment: 'C-ECHO outside Verification' };
      case commandField.cStoreRq:
        return { status: status.cannotUnderstand, errorComment: 'C-STORE without a data set' };
      case commandField.nCreateRq:
        return handleMpps(this.#association, context, command, 'create', undefined);
      case commandField.nSetRq:
        return handleMpps(this.#association, context, command, 'update', undefined);
      default:
        return { status: status.unrecognizedOperation, errorComment: 'Operation not supported' };
    }
  }

  /** Starts a query or retrieve beside the read loop; it answers the request itself. */
  #start(context: AcceptedContext, command: CommandSet, identifier: Buffer): undefined {
    const operation: RunningOperation = { messageId: command.uint16(tag.messageId) ?? 0, cancel: new AbortController(), storeResponses: new StoreResponses() };
    const channel: OperationChannel = {
      contexts: this.#contexts,
      peerMaxPduLength: this.#peerMaxPduLength,
      signal: operation.cancel.signal,
      write: this.#write,
      nextStoreResponse: () => operation.storeResponses.next(),
    };
    this.#operation = operation;
    void runQueryRetrieve(this.#association, channel, context, command, identifier)
      .catch((error: unknown) => this.#association.logger.error({ err: error }, 'query/retrieve operation failed'))
      .finally(() => {
        if (this.#operation === operation) this.#operation = undefined;
      });
    return undefined;
  }

  /** Collects a small attribute list in memory, refusing one beyond the cap. */
  #collect(handle: (dataset: Buffer) => Promise<DimseResult | undefined>): Receiver {
    const parts: Buffer[] = [];
    let length = 0;
    return {
      write: async (fragment) => {
        length += fragment.length;
        if (length <= maxSmallDatasetLength) parts.push(fragment);
      },
      finish: async () =>
        length > maxSmallDatasetLength ? { status: status.processingFailure, errorComment: 'Attribute list too large' } : handle(Buffer.concat(parts)),
      abandon: async () => {},
    };
  }

  #respond(message: Message, result: DimseResult | undefined): Buffer[] {
    this.#message = undefined;
    if (!result) return [];
    const command = message.command!;
    const field = command.uint16(tag.commandField) ?? 0;
    if (!isCompleted(result.status)) {
      this.#summary.refused++;
    } else if (field === commandField.cStoreRq) {
      this.#summary.stored++;
      this.#summary.storedBytes += message.datasetBytes;
    }
    const isNSet = field === commandField.nSetRq;
    const classUid = command.text(isNSet ? tag.requestedSopClassUid : tag.affectedSopClassUid) ?? (field === commandField.cEchoRq ? verificationSopClass : undefined);
    const instanceUid = command.text(isNSet ? tag.requestedSopInstanceUid : tag.affectedSopInstanceUid);
    const response = encodeResponse(
      {
        commandField: field | 0x8000,
        messageIdBeingRespondedTo: command.uint16(tag.messageId) ?? 0,
        ...(classUid ? { affectedSopClassUid: classUid } : {}),
        ...(instanceUid ? { affectedSopInstanceUid: instanceUid } : {}),
      },
      result,
    );
    if (!isCompleted(result.status)) this.#association.logger.info({ status: `0x${result.status.toString(16).padStart(4, '0')}`, comment: result.errorComment }, 'DIMSE request refused');
    return toPDataPdus(message.context.id, true, response, this.#peerMaxPduLength);
  }
}
