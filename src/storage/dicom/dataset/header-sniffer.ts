import { createInflateRaw, type InflateRaw } from 'node:zlib';
import { transferSyntax } from '../uids.ts';
import { DatasetWalker, type ByteSyntax } from './dataset-walker.ts';
import { decodeHeaderFields, lastHeaderTag, wantedHeaderTags, type DecodedHeader } from './header-fields.ts';

export interface SniffResult extends DecodedHeader {
  /** Set when the dataset is not well-formed (truncated, bad lengths, bad VRs). */
  error?: string;
}

export function byteSyntaxOf(transferSyntaxUid: string): ByteSyntax {
  if (transferSyntaxUid === transferSyntax.implicitLittle) return 'implicit-little';
  if (transferSyntaxUid === transferSyntax.explicitBig) return 'explicit-big';
  // Explicit VR little endian, deflated (once inflated) and every encapsulated syntax (PS3.5 A.4).
  return 'explicit-little';
}

const maxValueLength = 64 * 1024;

/**
 * Reads the index attributes from dataset bytes as they stream past (issue 5: pixel data is never
 * loaded). Plain syntaxes are walked to the end, which also proves the dataset is not truncated.
 * A deflated dataset (PS3.5 A.5, raw RFC 1951) is inflated only until the header attributes have
 * been read: the rest stays compressed and untouched, as stored.
 */
export class HeaderSniffer {
  #walker: DatasetWalker;
  #inflater: InflateRaw | undefined;
  #inflateError: string | undefined;
  #inflated: Promise<void> | undefined;

  constructor(transferSyntaxUid: string) {
    const deflated = transferSyntaxUid === transferSyntax.deflatedExplicitLittle;
    this.#walker = new DatasetWalker({
      syntax: byteSyntaxOf(transferSyntaxUid),
      wanted: wantedHeaderTags,
      maxValueLength,
      ...(deflated ? { stopAfterTag: lastHeaderTag } : {}),
    });
    if (deflated) {
      const inflater = createInflateRaw();
      this.#inflater = inflater;
      this.#inflated = new Promise((resolve) => {
        inflater.on('data', (chunk: Buffer) => {
          this.#walker.push(chunk);
          if (this.#walker.done) {
            inflater.destroy();
            resolve();
          }
        });
        inflater.on('end', resolve);
        inflater.on('close', resolve);
        inflater.on('error', (error) => {
          this.#inflateError = `the deflated dataset does not inflate: ${error.message}`;
          resolve();
        });
      });
    }
  }

  /** Resolves when the bytes have been taken; a deflated stream waits while its inflater is behind. */
  async push(chunk: Buffer): Promise<void> {
    const inflater = this.#inflater;
    if (!inflater) {
      this.#walker.push(chunk);
      return;
    }
    if (this.#walker.done || inflater.destroyed) return;
    if (!inflater.write(chunk)) {
      await new Promise<void>((resolve) => {
        const settle = () => {
          inflater.off('drain', settle);
          inflater.off('close', settle);
          resolve();
        };
        inflater.once('drain', settle);
        inflater.once('close', settle);
      });
    }
  }

  async finish(): Promise<SniffResult> {
    if (this.#inflater) {
      if (!this.#inflater.destroyed) this.#inflater.end();
      await this.#inflated;
    }
    this.#walker.end();
    const error = this.#inflateError ?? this.#walker.error;
    const decoded = decodeHeaderFields(this.#walker.values, this.#walker.oversized);
    return error === undefined ? decoded : { ...decoded, error };
  }

  /** Releases the inflater when the transfer is abandoned. */
  dispose(): void {
    this.#inflater?.destroy();
  }
}
