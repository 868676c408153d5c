import { baseEnv, parseEnvWith } from "@agentnet/service-kit";
import { z } from "zod";
import { allowanceProblem } from "./domain/allowance";

const hostList = z
  .string()
  .default("")
  .transform((value) =>
    value
      .split(",")
      .map((host) => host.trim())
      .filter((host) => host !== ""),
  );

export const VerifierEnv = z
  .object({
    ...baseEnv,
    NODE_ENV: z.string().optional(),
    /** One deadline for a whole check (resolve, connect, every page). */
    VERIFY_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
    VERIFY_MAX_BODY_BYTES: z.coerce
      .number()
      .int()
      .min(1024)
      .max(64 * 1024 * 1024)
      .default(5 * 1024 * 1024),
    /** Extra trusted CA certificate(s), PEM text, e.g. for a TLS-inspecting egress proxy or tests. */
    VERIFY_EXTRA_CA_PEM: z.string().optional(),
    /** Tests only: exact hostnames that may resolve to private addresses. Refused in production. */
    VERIFY_ALLOW_PRIVATE_HOSTS: hostList,
  })
  .superRefine((env, ctx) => {
    if (env.VERIFY_ALLOW_PRIVATE_HOSTS.length === 0) return;
    if (env.NODE_ENV === "production") {
      ctx.addIssue({
        code: "custom",
        path: ["VERIFY_ALLOW_PRIVATE_HOSTS"],
        message: "is for tests only and is refused when NODE_ENV=production",
      });
    }
    for (const host of env.VERIFY_ALLOW_PRIVATE_HOSTS) {
      const problem = allowanceProblem(host);
      if (problem) ctx.addIssue({ code: "custom", path: ["VERIFY_ALLOW_PRIVATE_HOSTS"], message: problem });
    }
  });
export type VerifierEnv = z.infer<typeof VerifierEnv>;

export const parseEnv = (source: NodeJS.ProcessEnv): VerifierEnv => parseEnvWith(VerifierEnv, source);
