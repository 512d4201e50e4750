/**
 * How payments are verified and settled (SETTLEMENT): `devchain`, the local
 * chain the api role starts (tests and demos); `remote`, a facilitator's
 * /verify and /settle (FACILITATOR_URL); `self`, in-process against a real
 * chain with the settler's key (PAYMENT_SETTLER_KEY, PAYMENT_RPC_URL).
 */
export type SettlementMode = 'devchain' | 'remote' | 'self';
