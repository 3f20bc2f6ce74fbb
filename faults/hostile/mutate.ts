/**
 * A seeded mutation engine: every input of a campaign is reproducible from (seed, index). The
 * mutations are the classic ones of coverage-less fuzzers (bit and byte flips, interesting
 * values, block deletion, duplication and splicing between seeds, truncation) plus insertion of
 * tokens that mean something to the format under test (delimiters, markup, numbers at limits).
 */
export class Random {
  #state: number;

  constructor(seed: number) {
    this.#state = seed >>> 0 || 1;
  }

  /** mulberry32: small, fast, good enough to spread mutations. */
  next(): number {
    let t = (this.#state = (this.#state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  int(max: number): number {
    return Math.floor(this.next() * max);
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }
}

const interestingBytes = [0x00, 0x01, 0x7f, 0x80, 0xff, 0x0a, 0x0d, 0x0b, 0x1c, 0x22, 0x26, 0x3c, 0x3e, 0x5c, 0x7c, 0x5e, 0x7e];

export function mutate(random: Random, seeds: readonly Buffer[], tokens: readonly string[], maxLength = 64 * 1024): Buffer {
  let data: Buffer = Buffer.from(random.pick(seeds));
  const rounds = 1 + random.int(random.next() < 0.8 ? 3 : 12);
  for (let round = 0; round < rounds; round++) {
    data = mutateOnce(random, data, seeds, tokens);
    if (data.length > maxLength) data = data.subarray(0, maxLength);
  }
  return data;
}

function mutateOnce(random: Random, data: Buffer, seeds: readonly Buffer[], tokens: readonly string[]): Buffer {
  const at = data.length ? random.int(data.length) : 0;
  switch (random.int(11)) {
    case 0: {
      // bit flip
      if (!data.length) return data;
      const copy = Buffer.from(data);
      copy[at] = copy[at]! ^ (1 << random.int(8));
      return copy;
    }
    case 1: {
      // interesting byte
      if (!data.length) return data;
      const copy = Buffer.from(data);
      copy[at] = random.pick(interestingBytes);
      return copy;
    }
    case 2: {
      // random byte run
      const run = Buffer.alloc(1 + random.int(8));
      for (let i = 0; i < run.length; i++) run[i] = random.int(256);
      return Buffer.concat([data.subarray(0, at), run, data.subarray(at)]);
    }
    case 3: {
      // delete a block
      const length = 1 + random.int(Math.max(1, Math.min(64, data.length - at)));
      return Buffer.concat([data.subarray(0, at), data.subarray(at + length)]);
    }
    case 4: {
      // duplicate a block
      const length = 1 + random.int(Math.max(1, Math.min(256, data.length - at)));
      const block = data.subarray(at, at + length);
      const times = random.next() < 0.9 ? 1 : 1 + random.int(20);
      return Buffer.concat([data.subarray(0, at), ...Array.from({ length: times + 1 }, () => block), data.subarray(at + length)]);
    }
    case 5: {
      // truncate
      return data.subarray(0, at);
    }
    case 6: {
      // splice with another seed
      const other = random.pick(seeds);
      const from = other.length ? random.int(other.length) : 0;
      return Buffer.concat([data.subarray(0, at), other.subarray(from, from + 1 + random.int(512))]);
    }
    case 7:
    case 8: {
      // format token
      const token = Buffer.from(random.pick(tokens), 'latin1');
      return Buffer.concat([data.subarray(0, at), token, data.subarray(at)]);
    }
    case 9: {
      // overwrite a 16/32-bit field with a boundary value (lengths in binary formats)
      if (data.length < 4) return data;
      const copy = Buffer.from(data);
      const position = Math.min(at, copy.length - 4);
      const value = random.pick([0, 1, 0x7fff, 0x8000, 0xffff, 0x7fffffff, 0x80000000, 0xffffffff, 0xfffffffe]);
      if (random.next() < 0.5) copy.writeUInt32BE(value >>> 0, position);
      else copy.writeUInt32LE(value >>> 0, position);
      return copy;
    }
    default: {
      // replace a line/segment with another seed's
      const text = data.toString('latin1');
      const lines = text.split(/(\r\n|\r|\n)/);
      const other = random.pick(seeds).toString('latin1').split(/\r\n|\r|\n/);
      lines[random.int(lines.length)] = random.pick(other);
      return Buffer.from(lines.join(''), 'latin1');
    }
  }
}
