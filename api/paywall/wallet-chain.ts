/**
 * What the paywall's script asks a browser wallet to switch to (EIP-3326
 * `wallet_switchEthereumChain`) and, when the wallet does not know the chain,
 * to add (EIP-3085 `wallet_addEthereumChain`): the payment network of the
 * challenge (CAIP-2 `eip155:<id>`) as a hex chain id, and for the chains the
 * gateway advertises by name (Base, Base Sepolia) their public parameters.
 * An unknown chain has no parameters: the page then asks the person to add it
 * to the wallet by hand. (On the local dev chain, which uses Base's chain id,
 * a wallet only signs: the EIP-712 signature needs the chain id, not the RPC.)
 */

export interface WalletChain {
  /** `0x2105` for 8453. */
  chainId: string;
  chainName: string;
  /** EIP-3085 parameters; absent for a chain this gateway does not know by name. */
  add?: {
    chainId: string;
    chainName: string;
    nativeCurrency: { name: string; symbol: string; decimals: number };
    rpcUrls: string[];
    blockExplorerUrls: string[];
  };
}

const ETHER = { name: 'Ether', symbol: 'ETH', decimals: 18 };

const KNOWN: Record<number, { chainName: string; rpcUrls: string[]; blockExplorerUrls: string[] }> = {
  8453: { chainName: 'Base', rpcUrls: ['https://mainnet.base.org'], blockExplorerUrls: ['https://basescan.org'] },
  84532: {
    chainName: 'Base Sepolia',
    rpcUrls: ['https://sepolia.base.org'],
    blockExplorerUrls: ['https://sepolia.basescan.org'],
  },
};

export function walletChainOf(network: string): WalletChain {
  const id = Number(network.split(':')[1]);
  const chainId = `0x${id.toString(16)}`;
  const known = KNOWN[id];
  if (!known) return { chainId, chainName: `chain ${id}` };
  return { chainId, chainName: known.chainName, add: { chainId, nativeCurrency: ETHER, ...known } };
}
