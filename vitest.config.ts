import { defineConfig } from "vitest/config";

// One run over every package; the global setup makes sure NATS and a MongoDB-wire
// server answer (starting local ones when they do not) and hands their URLs to tests.
export default defineConfig({
  test: {
    projects: ["apps/*", "packages/*"],
    globalSetup: ["packages/testkit/src/global-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 120_000,
  },
});
