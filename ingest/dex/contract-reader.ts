/**
 * Contract reads of the DEX ingestor, batched: through Multicall3 (viem's
 * `multicall`, `aggregate3` with allowFailure, split at `batchBytes` of
 * calldata) when the chain has it, otherwise one parallel call each
 * (QuoterV2 through `simulateContract`: it is not a view function, it
 * reverts internally). A read never throws: it answers one result per call,
 * in order, each a value or a one-line error; a failed multicall fails every
 * call of the batch. Reads may be pinned to a block.
 *
 * Multicall3 is used where code is deployed at the configured address (the
 * client chain's, else the canonical one); until that check has succeeded
 * once, calls go out in parallel and the check is retried on the next block.
 */
import type { Abi, Address, PublicClient } from 'viem';
import type { Logger } from '../../core/logger.js';
import { shortError } from './viem-error.js';

/** Multicall3's address on every chain that has it (Base included). */
export const MULTICALL3_ADDRESS: Address = '0xcA11bde05977b3631167028862bE2a173976CA11';

/**
 * The viem public client methods the ingestor uses. Any PublicClient fits,
 * including one built with viem's `base` chain, whose OP-stack formatters
 * make it unassignable to the plain `PublicClient` type (block and
 * transaction shapes differ); blocks are therefore read with a raw request.
 */
export type DexClient = Pick<
  PublicClient,
  | 'chain'
  | 'getCode'
  | 'getGasPrice'
  | 'multicall'
  | 'readContract'
  | 'request'
  | 'simulateContract'
  | 'watchBlockNumber'
>;

export interface Call {
  address: Address;
  abi: Abi;
  functionName: string;
  args?: readonly unknown[];
  /** Not a view function (QuoterV2): simulateContract when calls are not batched. */
  nonView?: boolean;
}

export type CallResult = { ok: true; value: unknown } | { ok: false; error: string };

export interface ContractReaderOptions {
  client: DexClient;
  /** Multicall3 to batch reads with. Default: the client chain's, else the canonical address, used only if code is deployed there. `false`: parallel calls. */
  multicall?: Address | false;
  /** Multicall calldata bytes per aggregate3 call (viem's batchSize). Default 8192. */
  batchBytes?: number;
  logger: Logger;
}

export class ContractReader {
  /** undefined: not checked yet; null: none, parallel calls. */
  private multicall: Address | null | undefined;

  constructor(private readonly options: ContractReaderOptions) {}

  /** The Multicall3 in use: undefined until checked, null when calls go out in parallel. */
  get multicallAddress(): Address | null | undefined {
    return this.multicall;
  }

  /** Checks once (retried while the check fails on an RPC error) whether Multicall3 is deployed. */
  async detectMulticall(): Promise<void> {
    if (this.multicall !== undefined) return;
    const { client, multicall: wanted } = this.options;
    if (wanted === false) {
      this.multicall = null;
      return;
    }
    const address = wanted ?? client.chain?.contracts?.multicall3?.address ?? MULTICALL3_ADDRESS;
    try {
      const code = await client.getCode({ address });
      this.multicall = code && code !== '0x' ? address : null;
    } catch (err) {
      this.options.logger.warn({ err: shortError(err) }, 'dex: Multicall3 check failed, retrying next block');
    }
  }

  /** Batched through Multicall3 when available, else parallel calls; never throws, one result per call. */
  async readMany(calls: Call[], blockNumber?: bigint): Promise<CallResult[]> {
    if (calls.length === 0) return [];
    const { client } = this.options;
    const at = blockNumber === undefined ? {} : { blockNumber };
    if (this.multicall) {
      try {
        const results = await client.multicall({
          contracts: calls.map(({ address, abi, functionName, args }) => ({ address, abi, functionName, args })),
          allowFailure: true,
          multicallAddress: this.multicall,
          batchSize: this.options.batchBytes ?? 8192,
          ...at,
        });
        return results.map((r): CallResult =>
          r.status === 'success' ? { ok: true, value: r.result } : { ok: false, error: shortError(r.error) },
        );
      } catch (err) {
        const error = shortError(err);
        return calls.map(() => ({ ok: false, error }));
      }
    }
    return Promise.all(
      calls.map(async ({ address, abi, functionName, args, nonView }): Promise<CallResult> => {
        try {
          const value = nonView
            ? (await client.simulateContract({ address, abi, functionName, args, ...at })).result
            : await client.readContract({ address, abi, functionName, args, ...at });
          return { ok: true, value };
        } catch (err) {
          return { ok: false, error: shortError(err) };
        }
      }),
    );
  }
}

/** The first bigint of a contract result (a tuple's first member, or the value itself). */
export function firstBigint(value: unknown): bigint | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  return typeof v === 'bigint' ? v : undefined;
}
