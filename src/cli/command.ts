import { UsageError } from './cli-error.ts';

export interface CommandOptions {
  required(name: string): string;
  optional(name: string): string | undefined;
  flag(name: string): boolean;
}

export interface CommandContext {
  action: string | undefined;
  options: CommandOptions;
  positionals: string[];
  json: boolean;
}

export interface CommandDefinition {
  /** e.g. "site create" or "serve". */
  usage: string[];
  actions: string[];
  /** Options taking a value. */
  values: string[];
  /** Options without a value. */
  flags?: string[];
  run(context: CommandContext): Promise<void>;
}

export function optionsFrom(values: Record<string, string | boolean | undefined>): CommandOptions {
  return {
    required(name) {
      const value = values[name];
      if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`);
      return value;
    },
    optional(name) {
      const value = values[name];
      return typeof value === 'string' ? value : undefined;
    },
    flag(name) {
      return values[name] === true;
    },
  };
}
