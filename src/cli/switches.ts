import { UsageError } from './cli-error.ts';
import type { CommandOptions } from './command.ts';

/**
 * A setting turned on or off by a pair of flags (--enable / --disable): true, false, or
 * undefined when neither was given. Both at once is a usage error.
 */
export function switchOf(options: CommandOptions, on: string, off: string): boolean | undefined {
  const [yes, no] = [options.flag(on), options.flag(off)];
  if (yes && no) throw new UsageError(`--${on} and --${off} contradict each other`);
  return yes ? true : no ? false : undefined;
}

/** A whole number option, or undefined when absent. */
export function integerOption(options: CommandOptions, name: string): number | undefined {
  const text = options.optional(name);
  if (text === undefined) return undefined;
  if (!/^\d{1,9}$/.test(text)) throw new UsageError(`--${name} must be a whole number`);
  return Number(text);
}
