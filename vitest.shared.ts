import { defineProject, type UserWorkspaceConfig } from "vitest/config";

/**
 * What every package's tests share. Projects do not inherit the root config's test options, so
 * the timeouts live here: integration tests talk to real backends on a 2-core machine.
 */
export const packageProject = (name: string): UserWorkspaceConfig =>
  defineProject({ test: { name, testTimeout: 30_000, hookTimeout: 120_000 } });
