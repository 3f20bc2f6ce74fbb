/**
 * Where export files live: {CG_EXPORT_DIR}/{site}/{job}/attempt-{n}/{Type}-{k}.ndjson. The folder
 * must be one every node sees (like the DICOM storage), because any node may serve a download.
 * An attempt has a folder of its own, so a worker that lost its lease and has not noticed yet can
 * never write into the files of the worker that took the job over.
 */
import { open, rm, type FileHandle } from 'node:fs/promises';
import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { isUuid } from '../uuid.ts';

export function jobFolder(dir: string, siteId: string, jobId: string): string {
  if (!isUuid(siteId) || !isUuid(jobId)) throw new Error('export folders are named by UUIDs only');
  return join(dir, siteId, jobId);
}

export function attemptFolderName(attempt: number): string {
  return `attempt-${attempt}`;
}

export async function removeJobFiles(dir: string, siteId: string, jobId: string): Promise<void> {
  await rm(jobFolder(dir, siteId, jobId), { recursive: true, force: true });
}

/** Job folders of a site on disk (the clean-up removes those whose job no longer exists). */
export async function jobFoldersOnDisk(dir: string): Promise<{ siteId: string; jobId: string }[]> {
  const found: { siteId: string; jobId: string }[] = [];
  let sites: string[];
  try {
    sites = await readdir(dir);
  } catch {
    return found;
  }
  for (const siteId of sites.filter(isUuid)) {
    for (const jobId of (await readdir(join(dir, siteId)).catch(() => [])).filter(isUuid)) found.push({ siteId, jobId });
  }
  return found;
}

/**
 * NDJSON output of one type, split into files of at most `maxBytes` (a file holds at least one
 * line). Lines are written as they come and awaited, so memory holds one batch at most.
 */
export class NdjsonFileSeries {
  readonly files: { file: string; count: number; bytes: number }[] = [];
  readonly #folder: string;
  readonly #relative: string;
  readonly #type: string;
  readonly #maxBytes: number;
  #handle: FileHandle | undefined;
  #pending: string[] = [];
  #pendingBytes = 0;

  constructor(folder: string, relative: string, type: string, maxBytes: number) {
    this.#folder = folder;
    this.#relative = relative;
    this.#type = type;
    this.#maxBytes = maxBytes;
  }

  get count(): number {
    return this.files.reduce((sum, file) => sum + file.count, 0);
  }

  /** Adds lines (without their newline) and writes them before returning. */
  async writeLines(lines: readonly string[]): Promise<void> {
    for (const line of lines) {
      const bytes = Buffer.byteLength(line) + 1;
      const current = this.files.at(-1);
      if (!current || (current.bytes + this.#pendingBytes > 0 && current.bytes + this.#pendingBytes + bytes > this.#maxBytes)) await this.#nextFile();
      this.#pending.push(line);
      this.#pendingBytes += bytes;
      this.files.at(-1)!.count += 1;
    }
    await this.#flush();
  }

  /** Writes, fsyncs and closes the last file: a completed export is durable before it is announced. */
  async close(): Promise<void> {
    await this.#flush();
    await this.#closeFile();
  }

  /** Closes without syncing (the attempt is being abandoned). */
  async abandon(): Promise<void> {
    await this.#handle?.close().catch(() => {});
    this.#handle = undefined;
  }

  async #nextFile(): Promise<void> {
    await this.#flush();
    await this.#closeFile();
    await mkdir(this.#folder, { recursive: true });
    const name = `${this.#type}-${this.files.length + 1}.ndjson`;
    this.#handle = await open(join(this.#folder, name), 'wx');
    this.files.push({ file: `${this.#relative}/${name}`, count: 0, bytes: 0 });
  }

  async #flush(): Promise<void> {
    if (this.#pending.length === 0) return;
    const text = `${this.#pending.join('\n')}\n`;
    this.files.at(-1)!.bytes += this.#pendingBytes;
    this.#pending = [];
    this.#pendingBytes = 0;
    await this.#handle!.write(text);
  }

  async #closeFile(): Promise<void> {
    if (!this.#handle) return;
    await this.#handle.sync();
    await this.#handle.close();
    this.#handle = undefined;
  }
}
