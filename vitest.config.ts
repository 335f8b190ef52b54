import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    // Tests spawn the CLI and build captures; keep them deterministic.
    env: { TZ: 'UTC', NO_COLOR: '1' },
  },
});
