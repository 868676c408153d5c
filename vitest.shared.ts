import { defineProject, type UserWorkspaceConfig } from "vitest/config";

/**
 * Integration tests talk to real backends on a 2-core machine. `expect.poll` waits 15 s for what a
 * test expects to come true: with every project running at once (CI), rendering a page or
 * delivering an event takes seconds, and the default of 1 s failed tests on timing, not behaviour.
 */
export const TIMEOUTS = { testTimeout: 30_000, hookTimeout: 120_000, expect: { poll: { timeout: 15_000 } } };

/** Starts NATS and a MongoDB-wire server for the run (or finds them) and hands their URLs to tests. */
export const BACKENDS_SETUP = "packages/testkit/src/global-setup.ts";

/** The tests beside the code of apps/ and packages/ (e2e/ is a project of its own), by tier. */
export const TESTS_NEXT_TO_CODE = ["apps/*/src/**/*.test.ts", "packages/*/src/**/*.test.ts"];
export const INTEGRATION_TESTS = ["apps/*/src/**/*.int.test.ts", "packages/*/src/**/*.int.test.ts"];

/**
 * What every package's tests share. Projects do not inherit the root config's test options, so
 * the timeouts live here.
 */
export const packageProject = (name: string): UserWorkspaceConfig =>
  defineProject({ test: { name, ...TIMEOUTS } });
