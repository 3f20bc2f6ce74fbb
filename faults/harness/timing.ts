/** Small helpers that keep every scenario bounded in time. */

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export class DeadlineError extends Error {
  override readonly name = 'DeadlineError';
}

/** Rejects with DeadlineError when `work` has not settled within `ms`. */
export async function withDeadline<T>(ms: number, what: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new DeadlineError(`${what} did not finish within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Polls `probe` until it returns true or `ms` pass; returns whether it became true. */
export async function waitUntil(ms: number, probe: () => Promise<boolean> | boolean, intervalMs = 100): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    try {
      if (await probe()) return true;
    } catch {
      // not yet
    }
    await sleep(intervalMs);
  }
  return false;
}
