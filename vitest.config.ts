import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Real engines: generous timeouts, and at most two files at once on a 2-core machine.
    testTimeout: 60000,
    hookTimeout: 90000,
    pool: 'forks',
    maxWorkers: 2,
    reporters: ['default'],
  },
});
