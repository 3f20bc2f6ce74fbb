import { DomainError } from '../errors.ts';

/**
 * PS3.5 6.2 (VR AE): at most 16 characters of the default repertoire, no backslash or control
 * characters; leading and trailing spaces are not significant, so a title of only spaces is empty.
 */
export function normalizeAeTitle(value: string): string {
  const trimmed = value.trim();
  if (trimmed.length === 0) throw new DomainError('invalid', 'the DICOM AE title must not be empty or all spaces', [{ message: 'the DICOM AE title must not be empty or all spaces', location: 'ae_title' }]);
  if (trimmed.length > 16) {
    throw new DomainError('invalid', 'the DICOM AE title must be at most 16 characters', [{ message: 'the DICOM AE title must be at most 16 characters', location: 'ae_title' }]);
  }
  if (/[\\\x00-\x1f\x7f]/.test(trimmed) || /[^\x20-\x7e]/.test(trimmed)) {
    throw new DomainError('invalid', 'the DICOM AE title may not contain a backslash, control characters or non-ASCII characters', [
      { message: 'the DICOM AE title may not contain a backslash, control characters or non-ASCII characters', location: 'ae_title' },
    ]);
  }
  return trimmed;
}
