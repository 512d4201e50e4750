/**
 * Offline check of the simulated market (no engines): simulates N hours for a
 * seed and prints its stylized-facts table, each figure beside its target
 * band and the published figure behind it (ingest/simulator/stylized-facts.ts).
 *
 *   npm run sim:facts                                   # seed 1, 24 h from 2025-04-01T00:00Z
 *   npm run sim:facts -- --seed 402 --hours 48 --start 2025-06-02T00:00:00Z
 *
 * Exits 1 when a figure is outside its band.
 */
import { parseArgs } from 'node:util';
import { formatFacts, inBand, measureFacts, simulateForFacts } from '../ingest/simulator/stylized-facts.js';

const USAGE =
  'usage: npm run sim:facts -- [--seed <uint32>] [--hours <1-168>] [--start <ISO time>] [--tick 250|500|1000]';

const { values } = parseArgs({
  options: {
    seed: { type: 'string', default: '1' },
    hours: { type: 'string', default: '24' },
    start: { type: 'string', default: '2025-04-01T00:00:00Z' },
    tick: { type: 'string', default: '500' },
  },
});
const seed = Number(values.seed);
const hours = Number(values.hours);
const startMs = Date.parse(values.start);
const tickMs = Number(values.tick);
if (
  !Number.isInteger(seed) ||
  seed < 0 ||
  seed > 0xffffffff ||
  !(hours >= 1 && hours <= 168) ||
  Number.isNaN(startMs) ||
  ![250, 500, 1000].includes(tickMs)
) {
  console.error(USAGE);
  process.exit(2);
}
const t0 = performance.now();
const observed = simulateForFacts(seed, startMs, hours, tickMs);
const facts = measureFacts(observed, startMs, hours);
console.log(`simulated market, seed ${seed}, ${hours} h from ${new Date(startMs).toISOString()}, ${tickMs} ms ticks`);
console.log(formatFacts(facts));
const out = facts.filter((f) => !inBand(f)).length;
console.log(`${facts.length - out}/${facts.length} in band; ${((performance.now() - t0) / 1000).toFixed(1)} s`);
process.exitCode = out ? 1 : 0;
