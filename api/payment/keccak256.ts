/**
 * Keccak-256 of a buffer, synchronously, on the `keccak` package's own
 * native sponge (its N-API binding; the package's JavaScript sponge where the
 * binding cannot load).
 *
 * Written by hand around the package rather than through its public
 * `createKeccak('keccak256')`: that API wraps every hash in a stream
 * Transform (~3 KB of objects, some of which outlive a scavenge and are
 * promoted to the old generation), and a paid request hashes twice. One
 * sponge is reused here (hashing is synchronous, so no two calls interleave):
 * half the CPU, and no garbage but the 32-byte digest. @noble/hashes's
 * keccak_256 (pure JavaScript) costs ~4x the native sponge on this machine.
 */
import { createRequire } from 'node:module';
import { dirname } from 'node:path';

interface KeccakSponge {
  initialize(rate: number, capacity: number): void;
  absorb(data: Buffer): void;
  squeeze(length: number): Buffer;
}

/** Keccak-256: rate 1088 bits, capacity 512 bits (the package's own parameters for 'keccak256'). */
const RATE = 1088;
const CAPACITY = 512;

function loadSponge(): KeccakSponge {
  const require = createRequire(import.meta.url);
  const manifest = require.resolve('keccak/package.json');
  const fromPackage = createRequire(manifest);
  let Sponge: new () => KeccakSponge;
  try {
    Sponge = fromPackage('node-gyp-build')(dirname(manifest)) as new () => KeccakSponge;
    if (typeof Sponge !== 'function') throw new Error('native add-on did not load');
  } catch {
    Sponge = fromPackage('./lib/keccak.js') as new () => KeccakSponge;
  }
  return new Sponge();
}

const sponge = loadSponge();

export function keccak256(data: Buffer): Buffer {
  sponge.initialize(RATE, CAPACITY);
  sponge.absorb(data);
  return sponge.squeeze(32);
}
