import { defineConfig } from "vitest/config";
import { BACKENDS_SETUP, INTEGRATION_TESTS, TIMEOUTS } from "./vitest.shared.ts";

// The integration tier (`pnpm test:int`): the *.int.test.ts under apps/ and packages/, against real
// NATS, MongoDB-wire and chDB; the tests of several services are e2e/'s.
export default defineConfig({
  test: { name: "int", include: INTEGRATION_TESTS, globalSetup: [BACKENDS_SETUP], ...TIMEOUTS },
});
