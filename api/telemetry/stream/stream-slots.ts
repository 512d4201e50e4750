/**
 * The paid streams open at once in this process, bounded by
 * STREAM_MAX_CONCURRENT: the pre-flight refuses a stream when none is free
 * (503 `stream_capacity_full`, before any challenge), and the handler takes
 * one (a race lost between the two fails the call, and its payment is
 * abandoned, never settled); a stream gives its slot back when it closes.
 */
export class StreamSlots {
  private open = 0;

  get inUse(): number {
    return this.open;
  }

  isFull(max: number): boolean {
    return this.open >= max;
  }

  /** A slot, or undefined when all `max` are taken; its release is idempotent. */
  take(max: number): (() => void) | undefined {
    if (this.isFull(max)) return undefined;
    this.open++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.open--;
    };
  }
}
