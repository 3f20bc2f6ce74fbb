import { parseArgs } from 'node:util';
import { TransientStorageError } from '../storage/errors.ts';
import { errorDocument, UsageError } from './cli-error.ts';
import { optionsFrom, type CommandDefinition } from './command.ts';
import { commands } from './commands/index.ts';

function usage(): string {
  return ['usage: clinical-gateway <command> [options] [--json]', '', 'commands:', ...Object.values(commands).flatMap((command) => command.usage.map((line) => `  ${line}`))].join('\n');
}

async function main(argv: string[]): Promise<number> {
  const [noun, ...rest] = argv;
  if (!noun || noun === '--help' || noun === '-h' || noun === 'help') {
    process.stdout.write(`${usage()}\n`);
    return noun ? 0 : 2;
  }
  const command: CommandDefinition | undefined = commands[noun];
  if (!command) throw new UsageError(`unknown command "${noun}"`);
  let action: string | undefined;
  if (command.actions.length > 0) {
    action = rest.shift();
    if (!action || !command.actions.includes(action)) {
      throw new UsageError(`"${noun}" needs one of: ${command.actions.join(', ')}`);
    }
  }
  const parsed = parseArgs({
    args: rest,
    allowPositionals: true,
    strict: true,
    options: Object.fromEntries([
      ['json', { type: 'boolean' as const }],
      ...command.values.map((name) => [name, { type: 'string' as const }]),
      ...(command.flags ?? []).map((name) => [name, { type: 'boolean' as const }]),
    ]),
  });
  const values = parsed.values as Record<string, string | boolean | undefined>;
  await command.run({ action, options: optionsFrom(values), positionals: parsed.positionals, json: values.json === true });
  return 0;
}

try {
  const status = await main(process.argv.slice(2));
  if (status !== 0) process.exitCode = status;
} catch (error) {
  // Exit status: 2 the command was called wrongly, 1 it was refused or failed (docs/configuration.md#command-line).
  const usageMistake = error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS') === true;
  let message = (error as Error)?.message ?? String(error);
  if (error instanceof TransientStorageError) message = 'the database is unavailable; check CG_DATABASE_URL or the embedded server, then retry';
  if (process.argv.includes('--json')) {
    process.stderr.write(`${JSON.stringify({ error: errorDocument(error, usageMistake ? 'usage' : 'failed', message) })}\n`);
  } else {
    process.stderr.write(usageMistake ? `error: ${message}\n\n${usage()}\n` : `error: ${message}\n`);
  }
  process.exitCode = usageMistake ? 2 : 1;
}
