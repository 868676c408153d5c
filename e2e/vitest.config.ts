import { configDefaults, mergeConfig } from "vitest/config";
import { packageProject } from "../vitest.shared.ts";

/**
 * The cluster fault suite (`e2e/src/cluster`) and `agentnet up --cluster`'s test run only through
 * `pnpm test:cluster`, which sets AGN_TEST_CLUSTER: CI runs it after `pnpm test`, alone, since
 * its rows measure timings that other test files running beside them would disturb.
 */
const clusterSuite = process.env.AGN_TEST_CLUSTER === "1";
const CLUSTER_TESTS = ["src/cluster/**", "src/cli/up-cluster.int.test.ts"];

export default mergeConfig(packageProject("@agentnet/e2e"), {
  test: { exclude: clusterSuite ? configDefaults.exclude : [...configDefaults.exclude, ...CLUSTER_TESTS] },
});
