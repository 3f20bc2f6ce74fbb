/**
 * fsync of folders, shared between concurrent callers as PostgreSQL's group commit shares a WAL
 * flush: a folder fsync makes durable every entry change made in that folder before it started,
 * so a caller whose rename is done waits for the next fsync to start after its request, and every
 * caller that asked while one was running shares that next one. Nobody is answered by an fsync
 * that began before their request: it might not cover their entry.
 */
export class DirectorySync {
  readonly #folders = new Map<string, { running: Promise<void>; next: Promise<void> | undefined }>();
  readonly #fsync: (folder: string) => Promise<void>;

  constructor(fsync: (folder: string) => Promise<void>) {
    this.#fsync = fsync;
  }

  sync(folder: string): Promise<void> {
    const state = this.#folders.get(folder);
    if (!state) return this.#start(folder);
    state.next ??= state.running.catch(() => {}).then(() => this.#start(folder));
    return state.next;
  }

  #start(folder: string): Promise<void> {
    const running = this.#fsync(folder);
    const state = { running, next: undefined as Promise<void> | undefined };
    this.#folders.set(folder, state);
    void running
      .catch(() => {})
      .then(() => {
        // A waiter that queued behind this round now runs as the next round (it replaced this
        // state in #start); otherwise the folder is idle and forgotten.
        if (this.#folders.get(folder) === state) this.#folders.delete(folder);
      });
    return running;
  }
}
