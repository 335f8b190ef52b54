import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    // Each file's scratch folders are removed when it ends.
    setupFiles: ['test/setup-file.ts'],
    // The usual report, then every skipped test by name with its reason (a skip fails CI unless allowed).
    reporters: ['default', './test/skip-report.ts'],
    testTimeout: 60_000,
    // Tests spawn the CLI and build captures; keep them deterministic.
    env: { TZ: 'UTC', NO_COLOR: '1' },
  },
});
