/**
 * The lint rule that keeps api/'s folders on floors (eslint.config.js,
 * API_FLOORS): the project's own ESLint configuration, through ESLint's Node
 * API, on snippets placed in api/'s folders. An import of a folder on the same
 * floor or one above, or of api/'s own files (static, type only, re-export or
 * dynamic), is an error naming the floors; imports of floors below, within a
 * folder, and out of api/ downward are not. api/'s place among the top-level
 * folders (IMPORT_DIRECTION) still holds in every folder.
 */
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ESLint } from 'eslint';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const eslint = new ESLint({ cwd: ROOT });

async function importErrors(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: join(ROOT, file) });
  return result!.messages
    .filter((m) => m.ruleId === 'no-restricted-imports' || m.ruleId === 'no-restricted-syntax')
    .map((m) => m.message);
}

const FLOORS =
  /api\/'s floors run middleware, dev-chain < payment < sku < .* < catalogue < .* < discovery < .*mcp.* < paywall/;

describe("api/'s folders import only the floors below their own", () => {
  it.each([
    // The two loops there were: catalogue <-> telemetry, discovery <-> mcp.
    [
      'api/telemetry/probe/sku.ts',
      "import { TELEMETRY_SKUS } from '../../catalogue/sku-list.js';\nexport const x = TELEMETRY_SKUS;\n",
    ],
    [
      'api/sku/probe.ts',
      "import type { CatalogueDeps } from '../catalogue/catalogue.js';\nexport type X = CatalogueDeps;\n",
    ],
    ['api/discovery/probe.ts', "export { mountMcp } from '../mcp/mount.js';\n"],
    // A folder of the same floor.
    [
      'api/telemetry/probe.ts',
      "import { runPaidCall } from '../paid-call/paid-call.js';\nexport const x = runPaidCall;\n",
    ],
    ['api/mcp/probe.ts', "import { mountDashboard } from '../dashboard/mount.js';\nexport const x = mountDashboard;\n"],
    // Dynamically, from the lowest floors.
    ['api/payment/probe.ts', "export const load = () => import('../sku/sku.js');\n"],
    ['api/middleware/probe.ts', "export const load = () => import('../routes/health.js');\n"],
    // api/'s own files (the app) stand above every floor.
    ['api/routes/probe.ts', "import { createApp } from '../app.js';\nexport const x = createApp;\n"],
    ['api/telemetry/probe/sku.ts', "import type { RunningApi } from '../../role.js';\nexport type X = RunningApi;\n"],
  ])('%s importing a floor that is not below is refused', async (file, code) => {
    const errors = await importErrors(file, code);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/api\/[a-z-]+\/ may import only /);
    expect(errors[0]).toMatch(FLOORS);
  });

  it('a folder of api/ still must not import roles/ or scripts/', async () => {
    const errors = await importErrors(
      'api/mcp/probe.ts',
      "import { startProcess } from '../../roles/process.js';\nexport const x = startProcess;\n",
    );
    expect(errors).toEqual([expect.stringMatching(/api\/ must not import roles, scripts\/: imports run core <- /)]);
  });

  it.each([
    [
      'api/mcp/probe.ts',
      "import { MCP_PATH } from '../discovery/mcp-tools.js';\nimport type { Sku } from '../sku/sku.js';\nimport { mountMcp } from './mount.js';\nimport type { Config } from '../../core/config.js';\nexport const x: [unknown, unknown, Sku?, Config?] = [MCP_PATH, mountMcp];\n",
    ],
    [
      'api/telemetry/probe/sku.ts',
      "import { DateParam } from '../../sku/schemas.js';\nimport { resolveWindow } from '../window.js';\nimport { readableUsdc } from '../../payment/usdc-amount.js';\nexport const x = [DateParam, resolveWindow, readableUsdc];\n",
    ],
    ['api/catalogue/probe.ts', "export const load = () => import('../telemetry/coverage/sku.js');\n"],
    [
      'api/probe.ts',
      "import { mountMcp } from './mcp/mount.js';\nimport { withBrowserPaywall } from './paywall/browser-paywall.js';\nexport const x = [mountMcp, withBrowserPaywall];\n",
    ],
  ])('%s importing floors below, its own folder or core/ is allowed', async (file, code) => {
    expect(await importErrors(file, code)).toEqual([]);
  });
});
