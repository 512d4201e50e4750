/**
 * The chain view's payer facts on a real dev chain (hardhat, automine and
 * 2 s blocks, the EIP-3009 test USDC): one read per block per payer; while a
 * new block's read is in flight a recently seen payer is answered from the
 * last block read (so no paid request waits on the chain), never further
 * behind than `maxStaleBlocks`; a `fresh` read, and a new payer's first,
 * wait for the read at the head.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { ChainView, type ChainHead } from '../../api/payment/chain-view.js';
import { startDevChain, type DevChain } from '../../api/dev-chain/dev-chain.js';

let chain: DevChain;
let view: ChainView;
const FUNDING = 5_000_000n;

/** The head the view publishes once it is past `number`. */
async function headPast(number: bigint): Promise<ChainHead> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const head = await view.latestHead();
    if (head && head.number > number) return head;
    if (Date.now() > deadline) throw new Error(`the view did not see a block past ${number}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Mints 1 atomic unit to a throwaway address: one more block on the automining chain. */
const mineOne = () => chain.mint(privateKeyToAccount(generatePrivateKey()).address, 1n);

beforeAll(async () => {
  chain = await startDevChain({ payerFundingAtomic: FUNDING, blockIntervalMs: 600_000 }); // blocks only from the test's own transactions
  view = new ChainView({
    client: chain.node.publicClient,
    asset: chain.usdc,
    rememberS: 600,
    pollMs: 100,
    maxStaleBlocks: 2,
  });
  await view.start();
}, 120_000);

afterAll(async () => {
  await view?.stop();
  await chain?.stop();
});

describe('payer facts', () => {
  it('reads a new payer at the head, and shares one read per block', async () => {
    const head = (await view.latestHead())!;
    const [a, b] = await Promise.all([view.payerFacts(chain.payer, head), view.payerFacts(chain.payer, head)]);
    expect(a).toEqual({ block: head.number, hasCode: false, balance: FUNDING });
    expect(b).toBe(a);
  });

  it('answers from the last block read while the new block is being read, then from the new block', async () => {
    const first = (await view.latestHead())!;
    await view.payerFacts(chain.payer, first);
    await chain.mint(chain.payer as Address, 7n); // a block that changes the balance
    const next = await headPast(first.number);
    // Asked twice before the read of the new block can answer: both from the last read, at once.
    const stale = await view.payerFacts(chain.payer, next);
    const staleAgain = await view.payerFacts(chain.payer, next);
    expect(stale.block).toBeLessThan(next.number);
    expect(stale.balance).toBe(FUNDING);
    expect(staleAgain.block).toBe(stale.block);
    // A fresh read waits for the head.
    const fresh = await view.payerFacts(chain.payer, next, { fresh: true });
    expect(fresh).toEqual({ block: next.number, hasCode: false, balance: FUNDING + 7n });
    // And once it has answered, everyone gets it.
    expect((await view.payerFacts(chain.payer, next)).block).toBe(next.number);
  });

  it('never answers from a read more than maxStaleBlocks behind the head', async () => {
    const from = (await view.latestHead())!;
    const known = await view.payerFacts(chain.payer, from, { fresh: true });
    await mineOne();
    await mineOne();
    await mineOne();
    const head = await headPast(from.number + 2n);
    const facts = await view.payerFacts(chain.payer, head);
    expect(head.number - known.block).toBeGreaterThan(2n);
    expect(facts.block).toBe(head.number);
  });

  it('waits for the head for a payer it has not seen', async () => {
    const stranger = privateKeyToAccount(generatePrivateKey()).address;
    await chain.mint(stranger, 3n);
    const head = await headPast((await view.latestHead())!.number - 1n);
    const facts = await view.payerFacts(stranger, head);
    expect(facts).toEqual({ block: head.number, hasCode: false, balance: 3n });
  });
});
