/**
 * Sign-in-with-x from a contract wallet (EIP-1271): a minimal wallet contract,
 * compiled with solc-js and deployed on a local chain (hardhat, chain id
 * 8453), whose owner signs the SIWE message that x402's client helper builds
 * for the wallet's address. Verified through viem's publicClient.verifyMessage
 * (the `evmVerifier` the gate passes; it also covers EIP-6492 wallets not yet
 * deployed); without it only EOAs verify.
 */
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSIWxPayload, encodeSIWxHeader, type CompleteSIWxInfo } from '@x402/extensions/sign-in-with-x';
import type { Abi, Address, Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { MemorySiwxStore } from '../../api/payment/siwx/memory-siwx-store.js';
import { RepeatAccess } from '../../api/payment/siwx/repeat-access.js';
import { startDevchain, type Devchain } from '../helpers/devchain.js';

const WALLET_SOURCE = `
// SPDX-License-Identifier: MIT
pragma solidity ^0.8.0;
contract OwnedWallet {
    address public immutable owner;
    constructor(address o) { owner = o; }
    function isValidSignature(bytes32 hash, bytes calldata sig) external view returns (bytes4) {
        if (sig.length != 65) return 0xffffffff;
        bytes32 r = bytes32(sig[0:32]);
        bytes32 s = bytes32(sig[32:64]);
        uint8 v = uint8(sig[64]);
        return ecrecover(hash, v, r, s) == owner ? bytes4(0x1626ba7e) : bytes4(0xffffffff);
    }
}`;

function compileWallet(): { abi: Abi; bytecode: Hex } {
  const solc = createRequire(import.meta.url)('solc') as { compile(input: string): string };
  const output = JSON.parse(
    solc.compile(
      JSON.stringify({
        language: 'Solidity',
        sources: { 'OwnedWallet.sol': { content: WALLET_SOURCE } },
        settings: { outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
      }),
    ),
  ) as {
    errors?: { severity: string; formattedMessage: string }[];
    contracts: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>;
  };
  const errors = output.errors?.filter((e) => e.severity === 'error') ?? [];
  if (errors.length) throw new Error(errors.map((e) => e.formattedMessage).join('\n'));
  const wallet = output.contracts['OwnedWallet.sol']!.OwnedWallet!;
  return { abi: wallet.abi, bytecode: `0x${wallet.evm.bytecode.object}` };
}

const ORIGIN = 'https://api.example.com';
const PATH = '/api/v1/crypto/spread-candles';
const closedDay = new Date(Date.now() - 3 * 86_400_000).toISOString().slice(0, 10);
const subject = { sku: { id: 'spread-candles', dayBlock: null }, input: { pair: 'ETH/USD', date: closedDay } };

let chain: Devchain;
let wallet: Address;
let owner: PrivateKeyAccount;

beforeAll(async () => {
  chain = await startDevchain({ chainId: 8453, accounts: 2 });
  owner = privateKeyToAccount(generatePrivateKey());
  const { abi, bytecode } = compileWallet();
  const hash = await chain.walletClient.deployContract({ abi, bytecode, args: [owner.address] });
  const receipt = await chain.publicClient.waitForTransactionReceipt({ hash });
  wallet = receipt.contractAddress!;
}, 120_000);

afterAll(async () => {
  await chain?.stop();
});

/** A proof for the wallet's address, signed by `signer` (the owner, or anyone else). */
async function walletProof(signer: PrivateKeyAccount): Promise<string> {
  const info: CompleteSIWxInfo = {
    domain: 'api.example.com',
    uri: `${ORIGIN}${PATH}?pair=ETH/USD&date=${closedDay}`,
    version: '1',
    nonce: generatePrivateKey().slice(2, 34),
    issuedAt: new Date().toISOString(),
    chainId: 'eip155:8453',
    type: 'eip191',
  };
  const payload = await createSIWxPayload(
    info,
    { address: wallet, signMessage: ({ message }: { message: string }) => signer.signMessage({ message }) },
    info.uri,
  );
  return encodeSIWxHeader(payload);
}

describe('sign-in-with-x from a contract wallet', () => {
  it('grants a wallet that paid when its owner signs, through viem; refuses without a verifier or another signer', async () => {
    const store = new MemorySiwxStore({ maxEntitlements: 100 });
    const options = {
      store,
      chains: ['eip155:8453'],
      entitlementTtlMs: 86_400_000,
      proofMaxAgeMs: 300_000,
      closedAfterMs: 600_000,
    };
    const withViem = new RepeatAccess({ ...options, evmVerifier: (args) => chain.publicClient.verifyMessage(args) });
    const eoaOnly = new RepeatAccess(options);
    await withViem.record({ payer: wallet, subject });
    const check = (access: RepeatAccess, header: string) =>
      access.check({ proof: { header }, origin: ORIGIN, resourcePath: PATH, subject });

    const eoa = await check(eoaOnly, await walletProof(owner));
    expect(eoa.kind === 'refused' && eoa.refusal.extra.reason).toBe('invalid_siwx_signature');
    const stranger = await check(withViem, await walletProof(privateKeyToAccount(generatePrivateKey())));
    expect(stranger.kind === 'refused' && stranger.refusal.extra.reason).toBe('invalid_siwx_signature');
    expect(await check(withViem, await walletProof(owner))).toEqual({ kind: 'granted', payer: wallet });
    await store.close();
  }, 60_000);
});
