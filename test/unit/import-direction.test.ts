/**
 * The lint rule that keeps imports running one way (eslint.config.js,
 * IMPORT_DIRECTION): the project's own ESLint configuration, through ESLint's
 * Node API, on snippets placed in each floor. An upward import (static, type
 * only, re-export or dynamic) is an error naming the rule; the same import
 * from a floor above, and imports within a floor, are not.
 */
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ESLint } from 'eslint';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const eslint = new ESLint({ cwd: ROOT });

async function directionErrors(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: join(ROOT, file) });
  return result!.messages
    .filter((m) => m.ruleId === 'no-restricted-imports' || m.ruleId === 'no-restricted-syntax')
    .map((m) => m.message);
}

describe('imports run core <- ingest, aggregate, jobs <- api <- roles <- scripts', () => {
  it.each([
    ['core/bus/probe.ts', "import { startApi } from '../../api/role.js';\nexport const x = startApi;\n"],
    ['core/probe.ts', "import type { RunningApi } from '../api/role.js';\nexport type X = RunningApi;\n"],
    ['core/probe.ts', "export { JOB_SKUS } from '../api/catalogue/sku-list.js';\n"],
    ['core/probe.ts', "export const load = () => import('../jobs/role.js');\n"],
    ['core/probe.ts', "export const load = () => import('../roles/process.js');\n"],
    ['jobs/probe/sku.ts', "import type { Sku } from '../../api/sku/sku.js';\nexport type X = Sku;\n"],
    ['jobs/probe.ts', "import { startIngest } from '../ingest/role.js';\nexport const x = startIngest;\n"],
    ['ingest/probe.ts', "import { startAggregate } from '../aggregate/role.js';\nexport const x = startAggregate;\n"],
    ['api/probe.ts', "import { startProcess } from '../roles/process.js';\nexport const x = startProcess;\n"],
    ['roles/probe.ts', "import { x } from '../scripts/replay.js';\nexport const y = x;\n"],
  ])('%s importing upward is refused', async (file, code) => {
    const errors = await directionErrors(file, code);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(
      /must not import .*imports run core <- ingest, aggregate, jobs <- api <- roles <- scripts/,
    );
  });

  it.each([
    [
      'api/probe.ts',
      "import { JOB_SKUS } from './catalogue/sku-list.js';\nimport { skuJobName } from '../jobs/sku-processor.js';\nimport type { Config } from '../core/config.js';\nexport const x: [unknown, unknown, Config?] = [JOB_SKUS, skuJobName];\n",
    ],
    [
      'jobs/probe/sku.ts',
      "import { z } from 'zod';\nimport { MAX_TEXT } from '../text-size-limits.js';\nimport { AppError } from '../../core/errors.js';\nexport const x = [z, MAX_TEXT, AppError];\n",
    ],
    ['roles/probe.ts', "export const load = () => import('../api/role.js');\n"],
    ['scripts/probe.ts', "import { startProcess } from '../roles/process.js';\nexport const x = startProcess;\n"],
  ])('%s importing downward or within its floor is allowed', async (file, code) => {
    expect(await directionErrors(file, code)).toEqual([]);
  });
});
