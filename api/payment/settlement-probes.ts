/**
 * Health probes of the settlement port, as /health shows them: a remote
 * facilitator is ok when its `/supported` lists the `exact` scheme on the
 * configured network for x402 v2, else down; the in-process facilitator is
 * down when the chain cannot be read or the asset is no ERC-20 contract, and
 * degraded when the chain head is stale, was not read lately, or the settler
 * holds no gas. Probes never throw: a failure is a `down` result with a reason.
 */
import type { FacilitatorClient } from '@x402/core/server';
import { erc20Abi, type Address } from 'viem';
import { errorMessage } from '../../core/errors.js';
import type { ProbeResult } from '../../core/health.js';
import type { LocalFacilitator } from './local-facilitator.js';
import type { SettlementMode } from './settlement-mode.js';

/** ok when `/supported` lists `exact` on the network for x402 v2. */
export async function probeFacilitator(
  facilitator: FacilitatorClient,
  network: string,
  facts: Record<string, unknown>,
): Promise<ProbeResult> {
  try {
    const supported = await facilitator.getSupported();
    const kind = supported.kinds.find((k) => k.x402Version === 2 && k.scheme === 'exact' && k.network === network);
    if (!kind)
      return {
        status: 'down',
        ...facts,
        network,
        reason: `facilitator does not support exact on ${network} (x402 v2)`,
      };
    return { status: 'ok', ...facts, network };
  } catch (err) {
    return { status: 'down', ...facts, network, reason: errorMessage(err) };
  }
}

/**
 * The in-process facilitator: down when the chain cannot be read or the asset has no code; degraded when
 * the head is older than `staleMs` (the chain stopped, or the RPC serves an old block) or the settler holds
 * no gas. Also shows the settlement queue's figures.
 */
export async function probeLocal(
  facilitator: LocalFacilitator,
  asset: Address,
  adapter: SettlementMode,
  staleMs: number,
): Promise<ProbeResult> {
  const view = facilitator.chain.status();
  const { stats } = facilitator.queue;
  const facts = {
    adapter,
    settler: facilitator.settler,
    asset,
    nonce_store: facilitator.lease.kind,
    ...(view.head ? { head: view.head } : {}),
    answer_on: facilitator.queue.answersOn,
    settlements: {
      settled: stats.settled,
      failed: stats.failed,
      transactions: stats.transactions,
      batched_transactions: stats.batches,
      backlog: facilitator.queue.backlog,
      answered_on_broadcast: stats.answeredOnBroadcast,
      lost: stats.lost,
    },
    ...(facilitator.risk ? { risk: facilitator.risk.snapshot() } : {}),
  };
  try {
    const [code, gas, balanceOk] = await Promise.all([
      facilitator.publicClient.getCode({ address: asset }),
      facilitator.publicClient.getBalance({ address: facilitator.settler }),
      facilitator.publicClient.readContract({ address: asset, abi: erc20Abi, functionName: 'decimals' }).then(
        () => true,
        () => false,
      ),
    ]);
    if (!code || code === '0x' || !balanceOk)
      return { status: 'down', ...facts, reason: `no ERC-20 contract at asset ${asset}` };
    if (!view.head)
      return { status: 'down', ...facts, reason: `chain head not read: ${view.error?.message ?? 'no answer yet'}` };
    if (view.head.age_ms > staleMs)
      return {
        status: 'degraded',
        ...facts,
        reason: `chain head ${view.head.number} is ${Math.round(view.head.age_ms / 1000)} s old (stale after ${Math.round(staleMs / 1000)} s)`,
      };
    if (view.error)
      return {
        status: 'degraded',
        ...facts,
        reason: `chain head not read since ${view.error.at}: ${view.error.message}`,
      };
    if (gas === 0n) return { status: 'degraded', ...facts, reason: 'settler wallet holds no gas' };
    const risk = facts.risk;
    if (risk && risk.losses_in_window > 0)
      return {
        status: 'degraded',
        ...facts,
        reason: `${risk.losses_in_window} settlement(s) answered on broadcast failed (${risk.lost_in_window_atomic} atomic lost in the hold window); ${risk.payers_on_hold} payer(s) on hold`,
      };
    return { status: 'ok', ...facts };
  } catch (err) {
    return { status: 'down', ...facts, reason: errorMessage(err).split('\n')[0] };
  }
}
