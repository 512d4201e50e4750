/**
 * dex-price-summary's pure rules on the recorded-shape fixtures: query
 * classification, the base-token filter, the top-pair order (liquidity, then
 * 24h volume, then pair address) and the catalogue match for own data.
 */
import { describe, expect, it } from 'vitest';
import { loadPairs } from '../../core/markets/pairs.js';
import { JobError } from '../../core/queue/queue.js';
import { DexPair } from '../../jobs/dex-price-summary/dexscreener.js';
import { matchOwnToken, ownTokens } from '../../jobs/dex-price-summary/own-prices.js';
import { classifyQuery, selectPairs, summarise, topPair } from '../../jobs/dex-price-summary/select.js';
import { dexFixture } from '../helpers/dexscreener-server.js';

const pairsOf = (name: string) => (dexFixture(name).pairs ?? []).map((p) => DexPair.parse(p));

describe('query classification', () => {
  it('tells EVM addresses, Solana addresses and symbols apart', () => {
    expect(classifyQuery(' 0x940181a94A35A4569E4529A3CDfB74e38FD98631 ')).toEqual({
      kind: 'evm_address',
      address: '0x940181a94a35a4569e4529a3cdfb74e38fd98631',
    });
    expect(classifyQuery('DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263')).toEqual({
      kind: 'solana_address',
      address: 'DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263',
    });
    expect(classifyQuery('$DEGEN')).toEqual({ kind: 'symbol', symbol: 'DEGEN' });
    expect(classifyQuery('0xBTC')).toEqual({ kind: 'symbol', symbol: '0xBTC' });
    expect(classifyQuery('Aerodrome Finance')).toEqual({ kind: 'symbol', symbol: 'Aerodrome Finance' });
    for (const bad of ['', '$', '0x940181a94A35A4569E4529A3CDfB74e38FD9863', 'a\u0000b', 'x'.repeat(65)]) {
      expect(() => classifyQuery(bad), JSON.stringify(bad)).toThrow(JobError);
    }
  });
});

describe('pair selection', () => {
  it('keeps pairs where the token is the base token and ranks them by USD liquidity', () => {
    const pairs = pairsOf('search-aero.json');
    const sel = selectPairs({ kind: 'symbol', symbol: 'aero' }, pairs);
    expect(sel.candidates.map((p) => p.chainId + ':' + p.dexId)).toEqual([
      'base:aerodrome',
      'base:aerodrome',
      'base:uniswap',
      'bsc:pancakeswap',
      'base:aerodrome',
    ]);
    expect(sel.candidates.every((p) => p.baseToken.symbol === 'AERO')).toBe(true);
    expect(sel.top?.liquidity?.usd).toBe(41200000.12);
    // A name matches too.
    expect(selectPairs({ kind: 'symbol', symbol: 'aerodrome finance' }, pairs).top?.pairAddress).toBe(
      sel.top?.pairAddress,
    );
  });

  it('breaks liquidity ties by 24h volume, then by pair address; pairs without a USD price never win', () => {
    const [a, b] = pairsOf('search-aero.json');
    const tieA = { ...a!, pairAddress: '0xB', liquidity: { usd: 5 }, volume: { h24: 10 } };
    const tieB = { ...b!, pairAddress: '0xA', liquidity: { usd: 5 }, volume: { h24: 20 } };
    const tieC = { ...b!, pairAddress: '0x0', liquidity: { usd: 5 }, volume: { h24: 20 } };
    const noPrice = { ...a!, pairAddress: '0xZ', liquidity: { usd: 1e12 }, priceUsd: undefined };
    expect(topPair([tieA, tieB])?.pairAddress).toBe('0xA');
    expect(topPair([tieA, tieB, tieC])?.pairAddress).toBe('0x0');
    expect(topPair([noPrice, tieA])?.pairAddress).toBe('0xB');
    expect(topPair([noPrice])).toBeUndefined();
  });

  it('summarises a pair in the spec fields; missing 24h statistics are null, not zero', () => {
    const young = pairsOf('search-aero.json').find((p) => p.quoteToken.symbol === 'VIRTUAL')!;
    const s = summarise({ ...young, priceUsd: '0.81' });
    expect(s).toMatchObject({ priceUsd: 0.81, priceChange24h: null, liquidityUsd: null, priceNative: '0.4512' });
  });
});

describe('catalogue match for own data', () => {
  const tokens = ownTokens(loadPairs());
  it('matches a pair base, a pool base token symbol or a Base token address', () => {
    expect(matchOwnToken(tokens, { kind: 'symbol', symbol: 'eth' })?.pair).toBe('ETH/USD');
    expect(matchOwnToken(tokens, { kind: 'symbol', symbol: 'WETH' })?.pair).toBe('ETH/USD');
    expect(
      matchOwnToken(tokens, { kind: 'evm_address', address: '0x940181a94a35a4569e4529a3cdfb74e38fd98631' })?.pair,
    ).toBe('AERO/USD');
    expect(matchOwnToken(tokens, { kind: 'symbol', symbol: 'BONK' })).toBeUndefined();
    expect(
      matchOwnToken(tokens, { kind: 'solana_address', address: 'DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263' }),
    ).toBeUndefined();
    expect(matchOwnToken(tokens, { kind: 'symbol', symbol: 'AERO' })?.venues).toEqual(['aerodrome_base']);
  });
});
