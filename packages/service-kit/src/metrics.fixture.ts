/**
 * A service for `metrics.int.test.ts` with no HTTP server of its own, as the NATS-only services
 * are: runService gives it a metrics listener (`metricsSettings` from its environment) and it
 * counts into the registry it gets. Run with `node --import tsx`.
 */
import { z } from "zod";
import { baseEnv, parseEnvWith } from "./env";
import { BoundCounter, metricsSettings } from "./metrics";
import { runService } from "./run";

const env = parseEnvWith(z.object(baseEnv), process.env);

await runService(
  { name: "metered", logLevel: "info", healthPort: env.HEALTH_PORT, metrics: metricsSettings(env) },
  async ({ metrics }) => {
    if (metrics) {
      const jobs = new BoundCounter(metrics, {
        name: "agentnet_fixture_jobs_total",
        help: "jobs",
        labelNames: ["kind"],
      });
      jobs.bind({ kind: "sweep" }).value += 3;
    }
    return {};
  },
);
