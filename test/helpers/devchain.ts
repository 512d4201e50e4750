/**
 * A real local EVM chain for tests: hardhat@2's JSON-RPC node (EDR engine) as
 * a child process on 127.0.0.1. The implementation is product code (the
 * payment dev chain runs on it: api/dev-chain/hardhat-node.ts); this module keeps
 * the tests' names. Accounts come from the well-known test mnemonic unless
 * `accountKeys` is given, so their private keys are known.
 *
 * It does not follow DEVCHAIN_MINING: the suites that use it (DEX ingestion,
 * depth search) set their own block clock (`automine`, `blockIntervalMs`).
 * The payment dev chain (startDevChain, or SETTLEMENT=devchain through the
 * config) is the one that follows DEVCHAIN_MINING / DEVCHAIN_BLOCK_MS.
 */
import { startHardhatNode, type HardhatNode, type HardhatNodeOptions } from '../../api/dev-chain/hardhat-node.js';

export {
  DEVCHAIN_MNEMONIC,
  MULTICALL3_ADDRESS,
  installMulticall3,
  type DevAccount,
} from '../../api/dev-chain/hardhat-node.js';

export type DevchainOptions = HardhatNodeOptions;
export type Devchain = HardhatNode;

export function startDevchain(options: DevchainOptions = {}): Promise<Devchain> {
  return startHardhatNode(options);
}
