import type { AssociationContext } from '../../association/association-context.ts';
import type { AcceptedContext } from '../../association/negotiate.ts';
import type { OperationChannel } from '../../association/operation-channel.ts';
import { commandField, tag, type CommandSet } from '../../dimse/command-set.ts';
import { runFind } from './c-find.ts';
import { runRetrieve } from './retrieve.ts';

/** Runs a C-FIND, C-GET or C-MOVE request to its last response. */
export function runQueryRetrieve(association: AssociationContext, channel: OperationChannel, context: AcceptedContext, command: CommandSet, identifier: Buffer): Promise<void> {
  switch (command.uint16(tag.commandField)) {
    case commandField.cFindRq:
      return runFind(association, channel, context, command, identifier);
    case commandField.cGetRq:
      return runRetrieve(association, channel, context, command, identifier, 'get');
    default:
      return runRetrieve(association, channel, context, command, identifier, 'move');
  }
}
