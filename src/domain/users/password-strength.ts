/**
 * Refuses guessable passwords (NIST SP 800-63B 5.1.1.2: compare new passwords against lists of
 * commonly used, expected or compromised values, and context-specific words such as the user
 * name). The estimator is zxcvbn-ts with its common (leaked-password and keyboard-pattern) and
 * English dictionaries: it finds dictionary words, l33t spellings, repeats, sequences and dates
 * inside a password, not only whole-list matches, and estimates the guesses an attacker needs.
 */
import { createRequire } from 'node:module';
import type { ZxcvbnFactory } from '@zxcvbn-ts/core';

// Loaded on first use, not at import: the dictionaries hold about 30 MB resident in every process
// that imports the users module (each worker, the supervisor), most of which never sets a password.
const require = createRequire(import.meta.url);

/**
 * zxcvbn's score 3: about 10^8 guesses or more ("safely unguessable: moderate protection from an
 * offline slow-hash scenario"), the level its authors recommend as a minimum for new passwords.
 */
export const minimumScore = 3;

let estimator: ZxcvbnFactory | undefined;

function strengthEstimator(): ZxcvbnFactory {
  // The dictionaries take tens of milliseconds to load: only when a password is first set.
  if (estimator) return estimator;
  const { ZxcvbnFactory } = require('@zxcvbn-ts/core') as typeof import('@zxcvbn-ts/core');
  const common = require('@zxcvbn-ts/language-common') as typeof import('@zxcvbn-ts/language-common');
  const english = require('@zxcvbn-ts/language-en') as typeof import('@zxcvbn-ts/language-en');
  estimator = new ZxcvbnFactory({
    dictionary: { ...common.dictionary, ...english.dictionary },
    graphs: common.adjacencyGraphs,
    translations: english.translations,
  });
  return estimator;
}

/** The e-mail address and its local part are words an attacker tries first. */
function accountWords(email: string): string[] {
  const address = email.trim().toLowerCase();
  const localPart = address.split('@')[0] ?? '';
  return [address, ...(localPart.length >= 4 ? [localPart] : [])];
}

export function passwordWeakness(password: string, email: string): string | undefined {
  const lowered = password.toLowerCase();
  const words = accountWords(email);
  if (words.some((word) => word !== '' && lowered.includes(word))) return 'the password must not contain the e-mail address';
  const result = strengthEstimator().check(password, words);
  if (result.score >= minimumScore) return undefined;
  const advice = [result.feedback.warning, ...result.feedback.suggestions].filter((text): text is string => Boolean(text));
  return `the password is too easy to guess (a common password, word or pattern)${advice.length > 0 ? `: ${advice.join(' ')}` : ''}`;
}
