/**
 * The simulated market shows the stylized facts a desk expects, within the
 * bands documented beside each (ingest/simulator/stylized-facts.ts, the table
 * `npm run sim:facts` prints): heavy tails at 1 s to 5 min, |r|
 * autocorrelation out to an hour, a spread that follows volatility without
 * being a function of it, one-tick majors, dislocations lasting blocks,
 * cbETH as staked ETH and cbBTC as BTC, correlation rising in stress.
 *
 * Over three seeds and a day each (1 s ticks): the median of each fact over
 * the seeds is within its band, and each seed has at most two facts outside
 * (a day is a short sample for an autocorrelation at a one-hour lag).
 */
import { describe, expect, it } from 'vitest';
import { inBand, measureFacts, simulateForFacts, type Fact } from '../../ingest/simulator/stylized-facts.js';

const START = Date.UTC(2025, 3, 7);
const HOURS = 24;
const SEEDS = [1, 2, 3];

describe('stylized facts of the simulated market', () => {
  const runs: Fact[][] = SEEDS.map((seed) => measureFacts(simulateForFacts(seed, START, HOURS, 1000), START, HOURS));

  it('every fact is measured on every seed', () => {
    for (const facts of runs) {
      expect(facts.length).toBe(runs[0]!.length);
      expect(facts.length).toBeGreaterThanOrEqual(20);
      for (const f of facts) expect(Number.isFinite(f.value), f.name).toBe(true);
    }
  });

  it('the median over seeds of each fact is within its band', () => {
    for (let i = 0; i < runs[0]!.length; i++) {
      const values = runs.map((facts) => facts[i]!.value).sort((a, b) => a - b);
      const fact = { ...runs[0]![i]!, value: values[1]! };
      expect(inBand(fact), `${fact.name}: ${values.join(', ')} vs [${fact.band.join(', ')}]`).toBe(true);
    }
  });

  it('each seed has at most two facts outside their bands', () => {
    for (const [s, facts] of runs.entries()) {
      const out = facts.filter((f) => !inBand(f)).map((f) => `${f.name} = ${f.value}`);
      expect(out.length, `seed ${SEEDS[s]}: ${out.join('; ')}`).toBeLessThanOrEqual(2);
    }
  });

  it('the tails are heavy at every horizon, not only at the tick', () => {
    for (const facts of runs) {
      const kurtosis = facts.filter((f) => f.name.startsWith('excess kurtosis'));
      expect(kurtosis).toHaveLength(4);
      // The figures for the old simulator: 1.27 (1 s), 0.94 (10 s), 1.8 (1 min).
      for (const f of kurtosis) expect(f.value, f.name).toBeGreaterThan(1);
    }
  });
});
