/**
 * How the DEX ingestor follows the chain: viem's `watchBlockNumber`
 * (polling on http transports). A failing watch is logged once per distinct
 * error and shown in health until a block arrives. Blocks are processed
 * one at a time, in order: while a block is being processed, newer blocks
 * wait; only the newest waiting block is processed next, the others are
 * skipped and counted (`blocks_skipped_busy`); heights the watch never reported are counted as
 * `blocks_missed`; a height at or below the last one seen (the same block
 * again, a reorg to a lower one) is ignored. A block whose processing throws
 * is recorded (health: block watch failing) and the next one is processed.
 * No new block for `staleAfterMs`: degraded.
 */
import type { Logger } from '../../core/logger.js';
import type { DexClient } from './contract-reader.js';
import { shortError } from './viem-error.js';

export interface BlockFollowerOptions {
  client: Pick<DexClient, 'watchBlockNumber'>;
  /** Block polling interval (http transports). Default: the client's pollingInterval. */
  pollingIntervalMs?: number | undefined;
  staleAfterMs: number;
  /** Processes one block; a throw is recorded, never propagated. */
  processBlock: (blockNumber: bigint) => Promise<void>;
  /** Pools quoted per block, for the debug log. */
  poolCount: number;
  logger: Logger;
}

export class BlockFollower {
  private unwatch: (() => void) | undefined;
  private stopped = true;
  private startedAt = 0;
  private running: Promise<void> | undefined;
  private pendingBlock: bigint | undefined;

  private lastSeenBlock: bigint | undefined;
  private lastSeenAt = 0;
  private lastProcessedBlock: bigint | undefined;
  private blocksProcessed = 0;
  private blocksSkippedBusy = 0;
  private blocksMissed = 0;
  private lastProcessMs: number | undefined;
  private maxProcessMs = 0;
  private totalProcessMs = 0;
  private watchError: string | undefined;

  constructor(private readonly options: BlockFollowerOptions) {}

  /** Runs `prepare` (start-up reads), then follows new blocks; does nothing while already following. */
  async start(prepare: () => Promise<void>): Promise<void> {
    if (this.unwatch) return;
    this.stopped = false;
    this.startedAt = Date.now();
    this.lastSeenBlock = undefined; // heights passed while stopped are not "missed"
    this.lastSeenAt = 0;
    await prepare();
    const { client, pollingIntervalMs, logger } = this.options;
    this.unwatch = client.watchBlockNumber({
      emitOnBegin: true,
      emitMissed: false,
      ...(pollingIntervalMs ? { pollingInterval: pollingIntervalMs } : {}),
      onBlockNumber: (blockNumber) => this.onBlock(blockNumber),
      onError: (err) => {
        const message = shortError(err);
        // Log a failure once when it starts or changes, not on every poll; health carries it meanwhile.
        if (message !== this.watchError) logger.warn({ err: message }, 'dex: block watch failed');
        this.watchError = message;
      },
    });
  }

  /** Stops following blocks; resolves once the block in progress (if any) is processed. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unwatch?.();
    this.unwatch = undefined;
    if (this.pendingBlock !== undefined) this.blocksSkippedBusy += 1; // seen, never processed
    this.pendingBlock = undefined;
    await this.running;
  }

  /** Why following blocks degrades health, in order: not running, watch failing, no (new) block. */
  problems(now: number): string[] {
    const problems: string[] = [];
    if (this.stopped) problems.push('not running');
    if (this.watchError) problems.push(`block watch failing: ${this.watchError}`);
    if (this.lastSeenBlock === undefined) {
      if (!this.stopped)
        problems.push(`no block seen yet (started ${Math.round((now - this.startedAt) / 1000)} s ago)`);
    } else if (now - this.lastSeenAt > this.options.staleAfterMs) {
      problems.push(`no new block for ${Math.round((now - this.lastSeenAt) / 1000)} s (last ${this.lastSeenBlock})`);
    }
    return problems;
  }

  /** The block figures of health. */
  health(): Record<string, unknown> {
    return {
      last_block: this.lastSeenBlock === undefined ? null : Number(this.lastSeenBlock),
      last_block_at: this.lastSeenAt ? new Date(this.lastSeenAt).toISOString() : null,
      last_processed_block: this.lastProcessedBlock === undefined ? null : Number(this.lastProcessedBlock),
      blocks_processed: this.blocksProcessed,
      blocks_skipped_busy: this.blocksSkippedBusy,
      blocks_missed: this.blocksMissed,
      last_process_ms: this.lastProcessMs ?? null,
      avg_process_ms: this.blocksProcessed ? round1(this.totalProcessMs / this.blocksProcessed) : null,
      max_process_ms: this.maxProcessMs,
    };
  }

  private onBlock(blockNumber: bigint): void {
    if (this.stopped) return;
    const last = this.lastSeenBlock;
    if (last !== undefined && blockNumber <= last) return; // same height again, or a reorg to a lower one
    if (last !== undefined && blockNumber > last + 1n) this.blocksMissed += Number(blockNumber - last - 1n);
    this.lastSeenBlock = blockNumber;
    this.lastSeenAt = Date.now();
    this.watchError = undefined;
    if (this.running) {
      if (this.pendingBlock !== undefined) {
        this.blocksSkippedBusy += 1;
        // Counted in health; logged on the first skip and every 100th, not per block.
        if (this.blocksSkippedBusy === 1 || this.blocksSkippedBusy % 100 === 0) {
          this.options.logger.warn(
            { skipped: Number(this.pendingBlock), total: this.blocksSkippedBusy, last_process_ms: this.lastProcessMs },
            'dex: block skipped, previous one still in progress',
          );
        }
      }
      this.pendingBlock = blockNumber;
      return;
    }
    this.running = this.drain(blockNumber);
  }

  private async drain(first: bigint): Promise<void> {
    let next: bigint | undefined = first;
    while (next !== undefined && !this.stopped) {
      await this.runBlock(next);
      next = this.pendingBlock;
      this.pendingBlock = undefined;
    }
    this.running = undefined;
  }

  private async runBlock(blockNumber: bigint): Promise<void> {
    const { logger } = this.options;
    const t0 = performance.now();
    try {
      await this.options.processBlock(blockNumber);
    } catch (err) {
      // Anything unexpected: keep following blocks, say it in health.
      this.watchError = `block ${blockNumber}: ${shortError(err)}`;
      logger.error({ err: this.watchError }, 'dex: block processing failed');
    } finally {
      const ms = round1(performance.now() - t0);
      this.lastProcessMs = ms;
      this.maxProcessMs = Math.max(this.maxProcessMs, ms);
      this.totalProcessMs += ms;
      this.blocksProcessed += 1;
      this.lastProcessedBlock = blockNumber;
      logger.debug({ block: Number(blockNumber), ms, pools: this.options.poolCount }, 'dex: block processed');
    }
  }
}

const round1 = (ms: number) => Math.round(ms * 10) / 10;
