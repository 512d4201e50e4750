/**
 * Who signed an EIP-3009 TransferWithAuthorization: the EIP-712 digest and
 * ECDSA public-key recovery, on native code. Recovery goes through the
 * `secp256k1` package's prebuilt N-API binding of libsecp256k1 and hashing
 * through the `keccak` package's native sponge (keccak256.ts; both fall back
 * to their own JavaScript when the binding cannot load). Measured on this machine: ~0.08 ms
 * per signature, against 1.3-2.3 ms for viem's `recoverTypedDataAddress`
 * (noble, pure JavaScript), which was the largest CPU cost of a paid request.
 *
 * The struct hash is encoded by hand for this one fixed type (seven 32-byte
 * words), not through a generic EIP-712 encoder: that is what saves the time.
 * The domain separator is computed once per token. Tested against viem's
 * `hashTypedData` and `recoverTypedDataAddress`.
 *
 * Like FiatToken (USDC), only 65-byte signatures with v in {27, 28} and a low
 * s are accepted; anything else answers undefined (the caller then refuses
 * the signature or hands it to ERC-1271 verification).
 */
import secp256k1 from 'secp256k1';
import { keccak256 as keccak } from './keccak256.js';

const TRANSFER_TYPEHASH = keccak(
  Buffer.from(
    'TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)',
  ),
);
const DOMAIN_TYPEHASH = keccak(
  Buffer.from('EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)'),
);
/** secp256k1 n / 2: a larger s is the malleable twin of a valid signature, refused on chain. */
const HALF_N = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n;

export interface Eip712Domain {
  name: string;
  version: string;
  chainId: number;
  verifyingContract: string;
}

export interface TransferAuthorization {
  from: string;
  to: string;
  value: string | bigint;
  validAfter: string | bigint;
  validBefore: string | bigint;
  nonce: string;
}

const separators = new Map<string, Buffer>();

/** The EIP-712 domain separator of a token (cached). */
export function domainSeparator(domain: Eip712Domain): Buffer {
  const key = `${domain.name}\u0000${domain.version}\u0000${domain.chainId}\u0000${domain.verifyingContract.toLowerCase()}`;
  let separator = separators.get(key);
  if (!separator) {
    const words = Buffer.alloc(160);
    DOMAIN_TYPEHASH.copy(words, 0);
    keccak(Buffer.from(domain.name, 'utf8')).copy(words, 32);
    keccak(Buffer.from(domain.version, 'utf8')).copy(words, 64);
    writeWord(words, 96, BigInt(domain.chainId).toString(16));
    writeWord(words, 128, strip(domain.verifyingContract));
    separator = keccak(words);
    separators.set(key, separator);
  }
  return separator;
}

/**
 * Scratch space of the digest, reused by every call (the function is synchronous and writes every byte of both
 * before hashing them): two allocations fewer on every paid request.
 */
const structWords = Buffer.alloc(224);
const signedMessage = Buffer.alloc(66);

/** The digest a payer signs for `authorization` under `domain`. Throws on malformed fields. */
export function transferAuthorizationDigest(domain: Eip712Domain, authorization: TransferAuthorization): Buffer {
  const words = structWords;
  TRANSFER_TYPEHASH.copy(words, 0);
  writeWord(words, 32, address(authorization.from));
  writeWord(words, 64, address(authorization.to));
  writeWord(words, 96, uint256(authorization.value));
  writeWord(words, 128, uint256(authorization.validAfter));
  writeWord(words, 160, uint256(authorization.validBefore));
  writeWord(words, 192, bytes32(authorization.nonce));
  const message = signedMessage;
  message[0] = 0x19;
  message[1] = 0x01;
  domainSeparator(domain).copy(message, 2);
  keccak(words).copy(message, 34);
  return keccak(message);
}

/** The lower-case 0x address that signed `digest`, or undefined when the signature is not a valid low-s 65-byte ECDSA one. */
export function recoverSigner(digest: Buffer, signature: string): string | undefined {
  const hex = strip(signature);
  if (hex.length !== 130 || !/^[0-9a-fA-F]+$/.test(hex)) return undefined;
  const bytes = Buffer.from(hex, 'hex');
  const v = bytes[64]!;
  if (v !== 27 && v !== 28) return undefined;
  if (BigInt(`0x${hex.slice(64, 128)}`) > HALF_N) return undefined;
  try {
    const publicKey = secp256k1.ecdsaRecover(bytes.subarray(0, 64), v - 27, digest, false);
    return addressOf(publicKey);
  } catch {
    return undefined;
  }
}

/** Addresses of recently seen public keys: payers pay again and again, and hashing the key is a third of a verify's hashing. */
const addresses = new Map<string, string>();
const MAX_ADDRESSES = 10_000;

function addressOf(publicKey: Uint8Array): string {
  const key = Buffer.from(publicKey.buffer, publicKey.byteOffset + 1, 64).toString('latin1');
  let address = addresses.get(key);
  if (address === undefined) {
    address = `0x${keccak(Buffer.from(publicKey.subarray(1)))
      .subarray(12)
      .toString('hex')}`;
    if (addresses.size >= MAX_ADDRESSES) addresses.clear();
    addresses.set(key, address);
  }
  return address;
}

const strip = (hex: string) => (hex.startsWith('0x') || hex.startsWith('0X') ? hex.slice(2) : hex);

function address(value: string): string {
  const hex = strip(value);
  if (!/^[0-9a-fA-F]{40}$/.test(hex)) throw new Error(`not an address: ${value}`);
  return hex;
}

function bytes32(value: string): string {
  const hex = strip(value);
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw new Error(`not a bytes32: ${value}`);
  return hex;
}

function uint256(value: string | bigint): string {
  const v = typeof value === 'bigint' ? value : BigInt(value);
  if (v < 0n || v >= 1n << 256n) throw new Error(`not a uint256: ${value}`);
  return v.toString(16);
}

function writeWord(buffer: Buffer, offset: number, hex: string): void {
  buffer.write(hex.padStart(64, '0'), offset, 'hex');
}
