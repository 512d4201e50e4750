/**
 * Aerodrome support. No npm package ships Aerodrome's contracts, so they
 * cannot be deployed on the devchain: the reserve maths is checked with
 * hand-computed numbers, and the ingestor's Aerodrome path (factory lookup,
 * on-chain checks, reserves, getAmountOut ladder, parallel calls without
 * Multicall3) runs against an in-process JSON-RPC stand-in that implements a
 * volatile (x*y=k, 0.3% fee) pool the way Aerodrome's Pool.sol does.
 */
import { describe, expect, it } from 'vitest';
import {
  createPublicClient,
  custom,
  decodeFunctionData,
  encodeFunctionResult,
  numberToHex,
  zeroAddress,
  type Abi,
  type Address,
  type Hex,
} from 'viem';
import { createMemoryBus } from '../../core/bus/memory-bus.js';
import { LatencyEvent, QuoteEvent } from '../../core/events/market.js';
import type { ChainSpec, PoolSpec } from '../../core/markets/pairs.js';
import { TOPICS } from '../../core/topics.js';
import { aerodromeFactoryAbi, aerodromePoolAbi, erc20MetadataAbi, uniswapV3FactoryAbi } from '../../ingest/dex/abis.js';
import { quoteToBaseAtPrice, reservesMidPrice, reservesMidRatio } from '../../ingest/dex/aerodrome-pricing.js';
import { DexIngestor } from '../../ingest/dex/dex-ingestor.js';
import { eventually, testLogger } from '../helpers/config.js';

describe('aerodrome reserve pricing', () => {
  it('volatile pool: the reserve ratio, decimals applied', () => {
    // 10,000,000 AERO (18 dec) against 12,500,000 USDC (6 dec): 12.5e6 / 10e6 = 1.25 USDC per AERO.
    const r = {
      reserveBase: 10_000_000n * 10n ** 18n,
      reserveQuote: 12_500_000n * 10n ** 6n,
      baseDecimals: 18,
      quoteDecimals: 6,
      stable: false,
    };
    expect(reservesMidPrice(r)).toBe(1.25);
    // 1000 USDC at 1.25 is 800 AERO.
    expect(quoteToBaseAtPrice(1_000_000_000n, reservesMidRatio(r), 6, 18)).toBe(800n * 10n ** 18n);
  });

  it('stable pool: the slope of x^3*y + y^3*x, (3x^2*y + y^3) / (x^3 + 3x*y^2)', () => {
    // Balanced: (3 + 1) / (1 + 3) = 1.
    expect(
      reservesMidPrice({
        reserveBase: 5n * 10n ** 6n,
        reserveQuote: 5n * 10n ** 18n,
        baseDecimals: 6,
        quoteDecimals: 18,
        stable: true,
      }),
    ).toBe(1);
    // x = 2, y = 1 (normalised): (3*4*1 + 1) / (8 + 3*2*1) = 13/14; a constant-product pool would say 1/2.
    const stable = {
      reserveBase: 2_000_000n * 10n ** 6n,
      reserveQuote: 1_000_000n * 10n ** 6n,
      baseDecimals: 6,
      quoteDecimals: 6,
      stable: true,
    };
    expect(reservesMidPrice(stable)).toBe(13 / 14);
    expect(reservesMidPrice({ ...stable, stable: false })).toBe(0.5);
  });

  it('rejects empty reserves', () => {
    expect(() =>
      reservesMidPrice({ reserveBase: 0n, reserveQuote: 1n, baseDecimals: 18, quoteDecimals: 6, stable: false }),
    ).toThrow(/empty/);
  });
});

// ---------------------------------------------------------------- a minimal Base stand-in

const USDC: Address = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
const AERO: Address = '0x940181a94A35A4569E4529A3CDfB74e38FD98631';
const WETH: Address = '0x4200000000000000000000000000000000000006';
const AERO_FACTORY: Address = '0x420DD381b31aEf6683db6B902084cB0FFECe40Da';
const UNI_FACTORY: Address = '0x33128a8fC17869897dcE68Ed026d694621f6FDfD';
const POOL: Address = '0x6cDcb1C4A4D1C3C6d054b27AC5B77e89eAFb971d';
const FEE_BPS = 30n;

interface FakeChain {
  reserveAero: bigint;
  reserveUsdc: bigint;
  block: bigint;
  /** Each eth_blockNumber call advances the chain by this many blocks. */
  advancePerPoll: bigint;
  callDelayMs: number;
  calls: Record<string, number>;
}

/** Aerodrome Pool.getAmountOut for a volatile pool: fee on the input, then x*y=k. */
function amountOut(chain: FakeChain, amountIn: bigint, tokenIn: Address): bigint {
  const [rIn, rOut] =
    tokenIn.toLowerCase() === AERO.toLowerCase()
      ? [chain.reserveAero, chain.reserveUsdc]
      : [chain.reserveUsdc, chain.reserveAero];
  const inAfterFee = amountIn - (amountIn * FEE_BPS) / 10_000n;
  return (inAfterFee * rOut) / (rIn + inAfterFee);
}

function fakeBase(chain: FakeChain) {
  const answer = (abi: Abi, data: Hex, result: (fn: string, args: readonly unknown[]) => unknown): Hex => {
    const { functionName, args } = decodeFunctionData({ abi, data });
    return encodeFunctionResult({ abi, functionName, result: result(functionName, args ?? []) } as Parameters<
      typeof encodeFunctionResult
    >[0]);
  };
  return custom({
    async request({ method, params }: { method: string; params?: unknown }) {
      chain.calls[method] = (chain.calls[method] ?? 0) + 1;
      switch (method) {
        case 'eth_chainId':
          return numberToHex(8453);
        case 'eth_blockNumber':
          chain.block += chain.advancePerPoll;
          return numberToHex(chain.block);
        case 'eth_gasPrice':
          return numberToHex(2_000_000_000n);
        case 'eth_getCode':
          return '0x'; // no Multicall3 here: parallel calls
        case 'eth_getBlockByNumber':
          return {
            number: (params as [Hex])[0],
            timestamp: numberToHex(1_700_000_000n + chain.block * 2n),
            hash: `0x${'1'.repeat(64)}`,
            transactions: [],
          };
        case 'eth_call': {
          await new Promise((r) => setTimeout(r, chain.callDelayMs));
          const [{ to, data }] = params as [{ to: Address; data: Hex }];
          const target = to.toLowerCase();
          if (target === AERO_FACTORY.toLowerCase()) {
            return answer(aerodromeFactoryAbi, data, (fn, args) =>
              fn === 'getPool' ? (args[2] === false ? POOL : zeroAddress) : FEE_BPS,
            );
          }
          if (target === UNI_FACTORY.toLowerCase()) return answer(uniswapV3FactoryAbi, data, () => zeroAddress);
          if (target === POOL.toLowerCase()) {
            // token0 is the lower address: USDC 0x8335... < AERO 0x9401...
            return answer(aerodromePoolAbi, data, (fn, args) => {
              if (fn === 'token0') return USDC;
              if (fn === 'token1') return AERO;
              if (fn === 'stable') return false;
              if (fn === 'getReserves') return [chain.reserveUsdc, chain.reserveAero, 1_700_000_000n];
              return amountOut(chain, args[0] as bigint, args[1] as Address);
            });
          }
          if (target === USDC.toLowerCase()) return answer(erc20MetadataAbi, data, () => 6);
          if (target === AERO.toLowerCase()) return answer(erc20MetadataAbi, data, () => 18);
          return '0x';
        }
        default:
          throw new Error(`fake Base: ${method} not implemented`);
      }
    },
  });
}

const chainSpec: ChainSpec = {
  chain_id: 8453,
  name: 'base',
  usdc: { symbol: 'USDC', address: USDC, decimals: 6 },
  weth: { symbol: 'WETH', address: WETH, decimals: 18 },
  uniswap_v3: { factory: UNI_FACTORY, quoter_v2: '0x3d4e44Eb1374240CE5F1B871ab261CD16335B76a' },
  aerodrome: { factory: AERO_FACTORY, router: '0xcF77a3Ba9A5CA399B7c97c74d54e5b1Beb874E43' },
};
const aeroSpec: PoolSpec = {
  venue: 'aerodrome_base',
  protocol: 'aerodrome_v2',
  base_token: { symbol: 'AERO', address: AERO, decimals: 18 },
  quote_token: { symbol: 'USDC', address: USDC, decimals: 6 },
  fee_tier: 3000,
  stable: false,
};

async function run(chain: FakeChain, ladderUsd: number[], until: (ingestor: DexIngestor) => boolean) {
  const bus = await createMemoryBus({
    partitions: 1,
    batchSize: 100,
    maxAttempts: 1,
    retryBackoffMs: 10,
    logger: testLogger(),
  });
  const client = createPublicClient({ transport: fakeBase(chain), pollingInterval: 10 });
  const ingestor = new DexIngestor({
    client,
    chain: chainSpec,
    pools: [{ pair: 'AERO/USD', spec: aeroSpec }],
    ladderUsd,
    bus,
    logger: testLogger(),
    source: 'live',
  });
  await ingestor.start();
  await eventually(async () => until(ingestor), Boolean, 30_000, 10);
  await ingestor.stop();
  const read = async (topic: string) => {
    const end = await bus.endOffsets(topic);
    const out: string[] = [];
    const consumer = await bus.consume({
      groupId: `read-${topic}`,
      topics: [topic],
      fromBeginning: true,
      handleBatch: async (ms) => void out.push(...ms.map((m) => m.value)),
    });
    await eventually(
      async () => out.length,
      (n) => n >= Number(end[0] ?? 0),
      30_000,
      10,
    );
    await consumer.stop();
    return out;
  };
  const quotes = (await read(TOPICS.quotes)).map((v) => QuoteEvent.parse(JSON.parse(v)));
  const latency = (await read(TOPICS.latency)).map((v) => LatencyEvent.parse(JSON.parse(v)));
  await bus.close();
  return { ingestor, quotes, latency };
}

describe('DexIngestor on an Aerodrome volatile pool (JSON-RPC stand-in)', () => {
  it('prices from reserves, quotes the ladder with getAmountOut, publishes valid events', async () => {
    const chain: FakeChain = {
      reserveAero: 10_000_000n * 10n ** 18n,
      reserveUsdc: 12_500_000n * 10n ** 6n,
      block: 1000n,
      advancePerPoll: 0n,
      callDelayMs: 0,
      calls: {},
    };
    const { ingestor, quotes, latency } = await run(
      chain,
      [1000, 100000],
      (i) => (i.health().blocks_processed as number) >= 1,
    );
    const health = ingestor.health();
    const pools = health.pools as { status: string; pool: string; last_mid: number }[];
    expect(pools[0]).toMatchObject({ status: 'ready', pool: POOL });
    expect(health.multicall).toBeNull();
    expect(health.gas_pricing_pool).toBeNull();

    const q = quotes[0]!;
    expect(q).toMatchObject({
      pair: 'AERO/USD',
      venue: 'aerodrome_base',
      venue_kind: 'dex',
      fee_bps: 30,
      fee_included: true,
      sequence: 1000,
      source: 'live',
      gas_usd: null,
      gas_price_gwei: 2,
    });
    expect(q.event_id).toMatch(new RegExp(`^dex:8453:${POOL.toLowerCase()}:1000:[0-9a-f]{16}$`));
    expect(q.event_time_ms).toBe((1_700_000_000 + 2000) * 1000);
    expect(pools[0]).toMatchObject({ last_mid: 1.25 });
    expect(q.bid).toBe(q.ladder[0]!.sell_price);
    expect(q.ask).toBe(q.ladder[0]!.buy_price);
    // Buy $1000: 997 USDC after fee; out = 997e6 * 10e24 / (12.5e12 + 997e6) AERO-wei.
    const buyOut = (997_000_000n * 10_000_000n * 10n ** 18n) / (12_500_000n * 10n ** 6n + 997_000_000n);
    expect(q.ladder[0]!.buy_price).toBeCloseTo(1000 / (Number(buyOut) / 1e18), 9);
    // Sell 800 AERO ($1000 at mid): 797.6 after fee; out = 797.6e18 * 12.5e12 / (10e24 + 797.6e18) USDC units.
    const sellOut = (7976n * 10n ** 17n * 12_500_000n * 10n ** 6n) / (10_000_000n * 10n ** 18n + 7976n * 10n ** 17n);
    expect(q.ladder[0]!.sell_price).toBeCloseTo(Number(sellOut) / 1e6 / 800, 9);
    expect(q.ladder[1]!.buy_price!).toBeGreaterThan(q.ladder[0]!.buy_price!);
    expect(q.ladder[1]!.sell_price!).toBeLessThan(q.ladder[0]!.sell_price!);
    expect(latency[0]).toMatchObject({ venue: 'base_rpc', kind: 'dex_rpc', ok: true });
    // No Multicall3: every read was its own eth_call.
    expect(chain.calls.eth_call).toBeGreaterThan(5);
  });

  it('counts the blocks it skips while busy and the heights the poller never reported', async () => {
    // Every poll moves the chain 2 blocks (one height never reported); each eth_call takes 40 ms, so blocks pile up.
    const chain: FakeChain = {
      reserveAero: 10_000_000n * 10n ** 18n,
      reserveUsdc: 12_500_000n * 10n ** 6n,
      block: 5000n,
      advancePerPoll: 2n,
      callDelayMs: 40,
      calls: {},
    };
    const { ingestor, quotes } = await run(chain, [1000], (i) => (i.health().blocks_processed as number) >= 3);
    const h = ingestor.health();
    expect(h.blocks_skipped_busy as number).toBeGreaterThan(0);
    expect(h.blocks_missed as number).toBeGreaterThan(0);
    // Every height from the first to the last seen is accounted for: processed, skipped while busy, or never reported.
    const seen = (h.last_block as number) - 5002 + 1;
    expect((h.blocks_processed as number) + (h.blocks_skipped_busy as number) + (h.blocks_missed as number)).toBe(seen);
    expect(quotes.length).toBe(h.blocks_processed);
  });
});
