import { existsSync } from "node:fs";
import type { Backend } from "@agentnet/local-backends";

/** A Docker engine answers when its socket exists (or DOCKER_HOST is set) and `info` succeeds. */
export async function dockerAnswers(): Promise<boolean> {
  if (!process.env.DOCKER_HOST && !existsSync("/var/run/docker.sock")) return false;
  try {
    const { getContainerRuntimeClient } = await import("testcontainers");
    await getContainerRuntimeClient();
    return true;
  } catch {
    return false;
  }
}

/** Real MongoDB and NATS (JetStream) in throwaway containers. */
export async function startContainerBackends(): Promise<{
  natsUrl: string;
  mongoUrl: string;
  backend: Backend;
}> {
  const { GenericContainer, Wait } = await import("testcontainers");
  const [nats, mongo] = await Promise.all([
    new GenericContainer("nats:2.10")
      .withCommand(["-js"])
      .withExposedPorts(4222)
      .withWaitStrategy(Wait.forLogMessage(/Server is ready/))
      .start(),
    new GenericContainer("mongo:7")
      .withExposedPorts(27017)
      .withWaitStrategy(Wait.forListeningPorts())
      .start(),
  ]);
  return {
    natsUrl: `nats://${nats.getHost()}:${nats.getMappedPort(4222)}`,
    mongoUrl: `mongodb://${mongo.getHost()}:${mongo.getMappedPort(27017)}/agentnet_test`,
    backend: {
      url: "containers",
      origin: "started",
      engine: "testcontainers",
      stop: async () => {
        await Promise.all([nats.stop(), mongo.stop()]);
      },
    },
  };
}
