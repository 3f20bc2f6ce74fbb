import type { OperationChannel } from '../../association/operation-channel.ts';
import type { AcceptedContext } from '../../association/negotiate.ts';
import { tag, type CommandSet, type CommandValue } from '../../dimse/command-set.ts';
import type { DimseResult } from '../../dimse/dimse-result.ts';
import { encodeResponse, toPDataPdus } from '../../dimse/response.ts';

/** Sends the responses of one C-FIND, C-GET or C-MOVE request, with an identifier when given. */
export class OperationResponder {
  readonly #channel: OperationChannel;
  readonly #context: AcceptedContext;
  readonly #commandField: number;
  readonly #messageId: number;
  readonly #sopClassUid: string | undefined;

  constructor(channel: OperationChannel, context: AcceptedContext, command: CommandSet) {
    this.#channel = channel;
    this.#context = context;
    this.#commandField = (command.uint16(tag.commandField) ?? 0) | 0x8000;
    this.#messageId = command.uint16(tag.messageId) ?? 0;
    this.#sopClassUid = command.text(tag.affectedSopClassUid);
  }

  async send(result: DimseResult, identifier?: Buffer, extra: CommandValue[] = []): Promise<void> {
    const command = encodeResponse(
      {
        commandField: this.#commandField,
        messageIdBeingRespondedTo: this.#messageId,
        ...(this.#sopClassUid ? { affectedSopClassUid: this.#sopClassUid } : {}),
        hasDataSet: identifier !== undefined,
        extra,
      },
      result,
    );
    const pdus = toPDataPdus(this.#context.id, true, command, this.#channel.peerMaxPduLength);
    if (identifier) pdus.push(...toPDataPdus(this.#context.id, false, identifier, this.#channel.peerMaxPduLength));
    for (const pdu of pdus) await this.#channel.write(pdu);
  }
}
