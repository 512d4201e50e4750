/**
 * The load generator's signed PAYMENT-SIGNATURE headers waiting to be sent,
 * kept outside the V8 heap.
 *
 * An open-loop row at 1,000 paid requests/s for 65 s needs 65,000 distinct
 * signatures signed in advance (signing them during the row would take the
 * cores the server is measured on). Held as strings they are ~200 MB of
 * old-generation objects per row; the load generator's major-GC pauses
 * (~100 ms) then delay its own clock, and an open loop, which times each
 * request from its scheduled send, books them as server latency. Here they
 * sit in large Buffers (backing stores the GC does not walk), and each header
 * becomes a short-lived string only when its request is built.
 *
 * Semantics:
 *  - headers are handed out once each, oldest first (`take`);
 *  - `prune` drops the headers signed more than `maxAgeMs` ago (whole chunks,
 *    by the time of their first header, so never one that old, and at most
 *    one second early), so a run never sends an authorization about to
 *    expire;
 *  - what a run took belongs to it: its `HeaderList` keeps its chunks alive
 *    until the run drops it, and nothing taken returns to the pool.
 */

/** Headers per chunk: at ~3.3 KB each, ~13 MB Buffers, one per ~0.4 s of native signing. */
const CHUNK_HEADERS = 4096;
/** A chunk takes headers signed within this long of its first, so pruning by the first is exact to within it. */
const CHUNK_SPAN_MS = 1000;

class Chunk {
  readonly ends = new Uint32Array(CHUNK_HEADERS);
  count = 0;
  /** First header not yet taken. */
  next = 0;
  private bytes = 0;

  constructor(
    /** When the first header was signed, ms since the epoch. */
    readonly signedAt: number,
    private buf: Buffer,
  ) {}

  get full(): boolean {
    return this.count === CHUNK_HEADERS;
  }

  add(header: string): void {
    const len = Buffer.byteLength(header, 'latin1');
    if (this.bytes + len > this.buf.length) {
      const grown = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.bytes + len));
      this.buf.copy(grown, 0, 0, this.bytes);
      this.buf = grown;
    }
    this.bytes += this.buf.write(header, this.bytes, 'latin1');
    this.ends[this.count++] = this.bytes;
  }

  header(i: number): string {
    return this.buf.toString('latin1', i === 0 ? 0 : this.ends[i - 1], this.ends[i]);
  }
}

/** The headers one run took, in order. */
export class HeaderList {
  /** Cumulative counts: segment k holds list indices [starts[k], starts[k + 1]). */
  private readonly starts: number[] = [0];
  private segment = 0;

  constructor(private readonly segments: { chunk: Chunk; from: number; to: number }[]) {
    for (const s of segments) this.starts.push(this.starts.at(-1)! + s.to - s.from);
  }

  get length(): number {
    return this.starts.at(-1)!;
  }

  /** The i-th header (0 <= i < length); sequential reads cost no search. */
  get(i: number): string {
    if (i < 0 || i >= this.length) throw new RangeError(`header ${i} of ${this.length}`);
    let k = this.segment;
    if (!(this.starts[k]! <= i && i < this.starts[k + 1]!)) {
      k = 0;
      while (this.starts[k + 1]! <= i) k++;
      this.segment = k;
    }
    const s = this.segments[k]!;
    return s.chunk.header(s.from + i - this.starts[k]!);
  }
}

export class SignedHeaderPool {
  private chunks: Chunk[] = [];

  constructor(
    /** A header older than this is never handed out. */
    readonly maxAgeMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Headers ready to be taken (after `prune`). */
  get available(): number {
    let n = 0;
    for (const c of this.chunks) n += c.count - c.next;
    return n;
  }

  add(header: string): void {
    let last = this.chunks.at(-1);
    if (!last || last.full || this.now() - last.signedAt > CHUNK_SPAN_MS)
      this.chunks.push(
        (last = new Chunk(this.now(), Buffer.allocUnsafe(Math.max(CHUNK_HEADERS * 3584, header.length * 2)))),
      );
    last.add(header);
  }

  /** Drops the chunks whose first header is older than `maxAgeMs`. */
  prune(): void {
    const oldest = this.now() - this.maxAgeMs;
    this.chunks = this.chunks.filter((c) => c.signedAt >= oldest && c.next < c.count);
  }

  /** Up to `n` headers, oldest first, each handed out once (stale ones pruned first). */
  take(n = Number.POSITIVE_INFINITY): HeaderList {
    this.prune();
    const segments: { chunk: Chunk; from: number; to: number }[] = [];
    let left = n;
    for (const chunk of this.chunks) {
      if (left <= 0) break;
      const to = Math.min(chunk.count, chunk.next + left);
      if (to > chunk.next) segments.push({ chunk, from: chunk.next, to });
      left -= to - chunk.next;
      chunk.next = to;
    }
    this.chunks = this.chunks.filter((c) => c.next < c.count);
    return new HeaderList(segments);
  }
}
