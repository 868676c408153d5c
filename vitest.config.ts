import { defineConfig } from "vitest/config";
import { BACKENDS_SETUP, TIMEOUTS } from "./vitest.shared.ts";

// Every tier in one run (`pnpm test`), one project per package plus e2e/ (`--project @agentnet/<pkg>`).
// The tiers alone: vitest.unit.config.ts, vitest.int.config.ts, `--project @agentnet/e2e`.
export default defineConfig({
  test: {
    projects: ["apps/*", "packages/*", "e2e"],
    globalSetup: [BACKENDS_SETUP],
    ...TIMEOUTS,
  },
});
