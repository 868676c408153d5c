import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { composeNatsConfig } from "./compose";
import { findRepoRoot } from "./root";

describe("the compose file's NATS configuration", () => {
  it("is the one generated from the bus permissions (regenerate: pnpm --filter @agentnet/local-backends compose-config)", () => {
    const committed = readFileSync(join(findRepoRoot(), "infra", "nats", "nats-server.conf"), "utf8");
    expect(committed).toBe(composeNatsConfig());
  });

  it("names every password by an environment variable, never a value", () => {
    expect(composeNatsConfig()).toMatch(/password: \$NATS_PASSWORD_GATEWAY_PROXY,/);
    expect(composeNatsConfig()).not.toMatch(/password: "/);
  });
});
