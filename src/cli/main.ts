import { parseArgs } from 'node:util';
import { ConfigError } from '../config/env.ts';
import { DomainError } from '../domain/errors.ts';
import { DataDirectoryInUseError } from '../server/service-lock.ts';
import { BackupError } from '../storage/backup/postgres-tools.ts';
import { TransientStorageError } from '../storage/errors.ts';
import { UsageError } from './cli-error.ts';
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
  if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    process.stderr.write(`error: ${(error as Error).message}\n\n${usage()}\n`);
    process.exitCode = 2;
  } else if (error instanceof DomainError || error instanceof ConfigError || error instanceof DataDirectoryInUseError || error instanceof BackupError) {
    process.stderr.write(`error: ${error.message}\n`);
    process.exitCode = 1;
  } else if (error instanceof TransientStorageError) {
    process.stderr.write('error: the database is unavailable; check CG_DATABASE_URL or the embedded server, then retry\n');
    process.exitCode = 1;
  } else {
    process.stderr.write(`error: ${(error as Error)?.message ?? String(error)}\n`);
    process.exitCode = 1;
  }
}
