/**
 * Where `npm run pay` and `npm run pay:mcp` send their calls, and what they know of the dev chain: one rule for both.
 *
 * Server: PAY_SERVER_URL, else http://127.0.0.1:$HTTP_PORT (the variable the server listens on), else the API URL
 * that the dev chain's info file (`$DATA_DIR/devchain.json`) names, else http://127.0.0.1:4020. The scripts print
 * which one they use and how to change it.
 */
import { readDevChainInfo, type DevChainInfo } from '../api/payment/dev-chain.js';

export interface PayTarget {
  /** The server's base URL, without a trailing slash. */
  server: string;
  /** Where that URL came from, for the first line the scripts print. */
  from: string;
  dataDir: string;
  /** The dev chain's info file of DATA_DIR, when a server with SETTLEMENT=devchain runs from it. */
  devchain?: DevChainInfo;
}

export async function payTarget(env: NodeJS.ProcessEnv = process.env): Promise<PayTarget> {
  const dataDir = env.DATA_DIR ?? './data';
  let devchain: DevChainInfo | undefined;
  try {
    devchain = await readDevChainInfo(dataDir);
  } catch {
    // no dev chain running from this folder
  }
  const [server, from] = env.PAY_SERVER_URL
    ? [env.PAY_SERVER_URL, 'PAY_SERVER_URL']
    : env.HTTP_PORT
      ? [`http://127.0.0.1:${env.HTTP_PORT}`, 'HTTP_PORT']
      : devchain?.api_url
        ? [devchain.api_url, `${dataDir}/devchain.json`]
        : ['http://127.0.0.1:4020', 'the default port'];
  return { server: server.replace(/\/+$/, ''), from, dataDir, ...(devchain ? { devchain } : {}) };
}
