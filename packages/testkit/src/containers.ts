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

/** A real MongoDB in a throwaway container. */
export async function startContainerMongo(): Promise<{ mongoUrl: string; backend: Backend }> {
  const { GenericContainer, Wait } = await import("testcontainers");
  const mongo = await new GenericContainer("mongo:7")
    .withExposedPorts(27017)
    .withWaitStrategy(Wait.forListeningPorts())
    .start();
  return {
    mongoUrl: `mongodb://${mongo.getHost()}:${mongo.getMappedPort(27017)}/agentnet_test`,
    backend: {
      url: "containers",
      origin: "started",
      engine: "testcontainers",
      stop: async () => {
        await mongo.stop();
      },
    },
  };
}
