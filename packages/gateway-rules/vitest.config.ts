import { defineProject } from "vitest/config";

export default defineProject({ test: { name: "@agentnet/gateway-rules" } });
