import { configDefaults, mergeConfig } from "vitest/config";
import { packageProject } from "../vitest.shared.ts";

/**
 * The cluster fault suite (`e2e/src/cluster`) runs only through `pnpm test:cluster`, which sets
 * AGN_TEST_CLUSTER: it is not yet stable enough for the test command that gates every change
 * (a consumption leader stuck after a NATS node's loss, issue 37).
 */
const clusterSuite = process.env.AGN_TEST_CLUSTER === "1";

export default mergeConfig(packageProject("@agentnet/e2e"), {
  test: { exclude: clusterSuite ? configDefaults.exclude : [...configDefaults.exclude, "src/cluster/**"] },
});
