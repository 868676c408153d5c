import { describe, expect, it } from "vitest";
import { generateBusCredentials, natsServerConfig } from "./nats-auth";

const node = { host: "127.0.0.1", port: 4222, storeDir: "/data/a", passwords: generateBusCredentials() };

describe("a nats-server configuration", () => {
  it("names the node and joins its cluster with the route login in every route", () => {
    const config = natsServerConfig({
      ...node,
      serverName: "nats-a",
      cluster: {
        name: "agentnet",
        host: "0.0.0.0",
        port: 6222,
        routes: ["nats://nats-b:6222", "nats://nats-c:6222"],
        user: "route",
        password: "p@ss/word",
      },
    });
    expect(config).toContain('server_name: "nats-a"');
    expect(config).toContain(
      'cluster: {"name":"agentnet","listen":"0.0.0.0:6222","routes":["nats://route:p%40ss%2Fword@nats-b:6222","nats://route:p%40ss%2Fword@nats-c:6222"],"authorization":{"user":"route","password":"p@ss/word"}}',
    );
    expect(config).toContain('jetstream: { store_dir: "/data/a" }');
  });

  it("has neither a name nor a cluster for a single server", () => {
    const config = natsServerConfig(node);
    expect(config).not.toMatch(/server_name|cluster/);
  });
});
