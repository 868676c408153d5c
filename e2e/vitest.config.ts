import { configDefaults, mergeConfig } from "vitest/config";
import { packageProject } from "../vitest.shared.ts";

/**
 * The cluster fault suite (`e2e/src/cluster`) and `agentnet up --cluster`'s test run only through
 * `pnpm test:cluster`, which sets AGN_TEST_CLUSTER (CI runs it after `pnpm test` and reports it):
 * not yet stable enough for the test command that gates every change (issue 37: `up --cluster`'s
 * second start after a SIGKILL did not get ready within 5 minutes in 3 of about 8 full runs, not
 * yet diagnosed).
 */
const clusterSuite = process.env.AGN_TEST_CLUSTER === "1";
const CLUSTER_TESTS = ["src/cluster/**", "src/cli/up-cluster.int.test.ts"];

export default mergeConfig(packageProject("@agentnet/e2e"), {
  test: { exclude: clusterSuite ? configDefaults.exclude : [...configDefaults.exclude, ...CLUSTER_TESTS] },
});
