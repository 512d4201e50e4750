/**
 * The DEX venue latency probe: per block, `eth_gasPrice` timed alone, before
 * the block's batches. It is a cheap call the block needs anyway (the gas
 * price of the quotes), so rate-limited endpoints see no extra request. One
 * sample per block becomes a LatencyEvent: `kind: 'dex_rpc'`, venue
 * `latencyVenue` (one endpoint serves all pools, `base_rpc` by default),
 * endpoint `eth_gasPrice`, `ok: false` when the call failed (the quotes then
 * have no gas price; health shows the error until a read succeeds).
 */
import type { LatencyEvent } from '../../core/events/market.js';
import { contentEventId } from '../../core/events/event-id.js';
import type { DexClient } from './contract-reader.js';
import { shortError } from './viem-error.js';

/** One timed eth_gasPrice: the gas price (null when the call failed) and its round trip. */
export interface GasPriceSample {
  gasPrice: bigint | null;
  rttMs: number;
  ok: boolean;
}

export interface RpcLatencyProbeOptions {
  client: Pick<DexClient, 'getGasPrice'>;
  chainId: number;
  latencyVenue: string;
  source: 'live' | 'simulated';
}

export class RpcLatencyProbe {
  private lastRtt: number | undefined;
  private gasFailure: string | undefined;

  constructor(private readonly options: RpcLatencyProbeOptions) {}

  /** Round trip of the last sample (ms), for health. */
  get lastRttMs(): number | undefined {
    return this.lastRtt;
  }

  /** Why the last gas price read failed, while it does. */
  get gasError(): string | undefined {
    return this.gasFailure;
  }

  /** eth_gasPrice, timed alone; never throws. */
  async sample(): Promise<GasPriceSample> {
    const rttStart = performance.now();
    let gasPrice: bigint | null = null;
    let ok = true;
    try {
      gasPrice = await this.options.client.getGasPrice();
      this.gasFailure = undefined;
    } catch (err) {
      ok = false;
      this.gasFailure = shortError(err);
    }
    const rttMs = round1(performance.now() - rttStart);
    this.lastRtt = rttMs;
    return { gasPrice, rttMs, ok };
  }

  /** The block's LatencyEvent (not yet validated): the sample taken at `sampledAt`, published at `ingestTime`. */
  event(blockNumber: bigint, sample: GasPriceSample, sampledAt: number, ingestTime: number): LatencyEvent {
    const content = {
      venue: this.options.latencyVenue,
      venue_kind: 'dex' as const,
      kind: 'dex_rpc' as const,
      endpoint: 'eth_gasPrice',
      rtt_ms: sample.rttMs,
      ok: sample.ok,
      event_time_ms: sampledAt,
      ingest_time_ms: ingestTime,
      source: this.options.source,
    };
    // Identity (chain, block) plus a content digest: a block read again after a restart, or by a replica, with
    // another round trip is another sample, never one id for two (core/events/event-id.ts).
    return { event_id: contentEventId(`dex_rpc:${this.options.chainId}:${blockNumber}`, content), ...content };
  }
}

const round1 = (ms: number) => Math.round(ms * 10) / 10;
