import { connectServiceBus } from "@agentnet/bus";
import { runOptionsFromEnv, runService } from "@agentnet/service-kit";
import { startVerifier } from "./app";
import { parseEnv } from "./env";

const env = parseEnv(process.env);

await runService(
  { ...runOptionsFromEnv("provider-verifier", env), healthPort: env.HEALTH_PORT },
  async ({ logger, lifecycle, tracer, metrics }) => {
    const nc = await connectServiceBus(env, "provider-verifier", { lifecycle, tracer, metrics });
    await startVerifier({
      nc,
      logger,
      options: {
        timeoutMs: env.VERIFY_TIMEOUT_MS,
        maxBodyBytes: env.VERIFY_MAX_BODY_BYTES,
        allowPrivateHosts: env.VERIFY_ALLOW_PRIVATE_HOSTS,
        ...(env.VERIFY_EXTRA_CA_PEM ? { extraCa: [env.VERIFY_EXTRA_CA_PEM] } : {}),
      },
    });
    return { nats: env.NATS_URL };
  },
);
