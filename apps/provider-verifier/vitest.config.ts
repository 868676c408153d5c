import { packageProject } from "../../vitest.shared";

export default packageProject("@agentnet/provider-verifier");
