/**
 * Compiles api/dev-chain/contracts/TestUSDC.sol with solc-js (offline, pinned
 * compiler from devDependencies) into the committed artifact
 * api/dev-chain/contracts/TestUSDC.json (abi + creation bytecode), so start-up
 * never compiles. `--check` exits 1 when the artifact is stale: its source hash
 * or ABI differ from a fresh compile (the compiler version may differ: solc-js
 * is `^0.8.26`). Run: `npx tsx scripts/build-test-usdc.ts`.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const SOURCE = fileURLToPath(new URL('../api/dev-chain/contracts/TestUSDC.sol', import.meta.url));
const ARTIFACT = fileURLToPath(new URL('../api/dev-chain/contracts/TestUSDC.json', import.meta.url));

interface SolcOutput {
  errors?: { severity: 'error' | 'warning' | 'info'; formattedMessage: string }[];
  contracts?: Record<string, Record<string, { abi: unknown[]; evm: { bytecode: { object: string } } }>>;
}

export interface TestUsdcArtifact {
  contractName: 'TestUSDC';
  compiler: string;
  sourceSha256: string;
  abi: unknown[];
  bytecode: `0x${string}`;
}

export function compileTestUsdc(): TestUsdcArtifact {
  const solc = require('solc') as { compile(input: string): string; version(): string };
  const source = readFileSync(SOURCE, 'utf8');
  const input = {
    language: 'Solidity',
    sources: { 'TestUSDC.sol': { content: source } },
    settings: {
      optimizer: { enabled: true, runs: 200 },
      evmVersion: 'cancun',
      outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
    },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as SolcOutput;
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length) throw new Error(`solc failed:\n${errors.map((e) => e.formattedMessage).join('\n')}`);
  for (const w of output.errors ?? []) if (w.severity === 'warning') console.warn(w.formattedMessage);
  const contract = output.contracts?.['TestUSDC.sol']?.TestUSDC;
  if (!contract) throw new Error('solc produced no TestUSDC contract');
  return {
    contractName: 'TestUSDC',
    compiler: `solc-js ${solc.version()}`,
    sourceSha256: createHash('sha256').update(source).digest('hex'),
    abi: contract.abi,
    bytecode: `0x${contract.evm.bytecode.object}`,
  };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const artifact = compileTestUsdc();
  const text = `${JSON.stringify(artifact, null, 2)}\n`;
  if (process.argv.includes('--check')) {
    let current: Partial<TestUsdcArtifact> = {};
    try {
      current = JSON.parse(readFileSync(ARTIFACT, 'utf8')) as TestUsdcArtifact;
    } catch {
      // missing or unreadable counts as stale
    }
    if (
      current.sourceSha256 !== artifact.sourceSha256 ||
      JSON.stringify(current.abi) !== JSON.stringify(artifact.abi)
    ) {
      console.error('api/dev-chain/contracts/TestUSDC.json is stale: run npx tsx scripts/build-test-usdc.ts');
      process.exit(1);
    }
    console.log(`TestUSDC.json is current (built with ${current.compiler}; installed ${artifact.compiler})`);
  } else {
    writeFileSync(ARTIFACT, text);
    console.log(
      `TestUSDC.json written (${(artifact.bytecode.length - 2) / 2} bytes of creation code, ${artifact.compiler})`,
    );
  }
}
