# syntax=docker/dockerfile:1
# Production images: one target per service, each running its esbuild bundle (`pnpm build`:
# apps/<app>/dist/main.js) with plain node as the unprivileged `node` user, beside only the npm
# packages the bundle keeps external (`pnpm deploy --prod`).
#
#   docker build --target gateway-proxy -t agentnet/gateway-proxy .
#   docker compose --env-file .data/compose.env -f infra/docker-compose.yml --profile stack up -d --build
#
# e2e/src/bundles/bundles.int.test.ts runs this recipe's build and deploy steps and starts
# every service from the result; docs/DEPLOY.md says what is configured where.

# Node 20 and Debian bookworm (glibc) are what the tests run on; chDB's native library needs glibc.
ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS build
# pnpm at the version package.json pins (a test compares them); npm rather than corepack, as in
# infra/local/setup.sh.
ARG PNPM_VERSION=10.34.8
RUN npm install --global --no-fund --no-audit "pnpm@${PNPM_VERSION}"
ENV CI=true TURBO_TELEMETRY_DISABLED=1 npm_config_store_dir=/pnpm/store
WORKDIR /src
COPY . .
# The end-to-end tests (coding agents, about 1 GB) and the benchmarks build nothing that ships.
RUN --mount=type=cache,id=agentnet-pnpm-store,target=/pnpm/store \
    pnpm install --frozen-lockfile --filter '!@agentnet/e2e' --filter '!@agentnet/bench'
# Every app's bundle and the dashboard.
RUN pnpm build
# Each app with its production dependencies into /out/<app>/apps/<app>: the bundle resolves its
# external packages from node_modules beside it, and telemetry finds infra/clickhouse at
# dist/../../../infra/clickhouse, where the migrations' path points from a bundle.
RUN --mount=type=cache,id=agentnet-pnpm-store,target=/pnpm/store \
    for app in control-plane provider-verifier telemetry consumption gateway-proxy api-gateway; do \
      pnpm --filter "@agentnet/${app}" --config.inject-workspace-packages=true deploy --prod "/out/${app}/apps/${app}" \
        && rm -rf "/out/${app}/apps/${app}/src" || exit 1; \
    done \
    && mkdir -p /out/telemetry/infra /out/api-gateway/apps/dashboard \
    && cp -r infra/clickhouse /out/telemetry/infra/clickhouse \
    && cp -r apps/dashboard/dist /out/api-gateway/apps/dashboard/dist

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
# The files stay root's: the service reads its code and cannot change it.
USER node

# The services that only talk NATS serve /healthz and /readyz on HEALTH_PORT (on the container's
# loopback). The check asks /readyz: a service is healthy once its connections are up, so
# `docker compose up --wait` returns when the stack answers.
FROM runtime AS control-plane
COPY --from=build /out/control-plane /app
WORKDIR /app/apps/control-plane
ENV HEALTH_PORT=9090
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+process.env.HEALTH_PORT+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "dist/main.js"]

FROM runtime AS provider-verifier
COPY --from=build /out/provider-verifier /app
WORKDIR /app/apps/provider-verifier
ENV HEALTH_PORT=9090
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+process.env.HEALTH_PORT+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "dist/main.js"]

# chDB (in-process ClickHouse) keeps its data under /data when CLICKHOUSE_URL is unset; mount a
# volume there. With CLICKHOUSE_URL chDB is loaded but never opened.
FROM runtime AS telemetry
USER root
RUN mkdir /data && chown node:node /data
USER node
COPY --from=build /out/telemetry /app
WORKDIR /app/apps/telemetry
ENV HEALTH_PORT=9090 AGN_DATA_DIR=/data
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+process.env.HEALTH_PORT+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# A batch's events outlive V8's default young generation (apps/telemetry/README.md).
CMD ["node", "--max-semi-space-size=64", "dist/main.js"]

FROM runtime AS consumption
COPY --from=build /out/consumption /app
WORKDIR /app/apps/consumption
ENV HEALTH_PORT=9090
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+process.env.HEALTH_PORT+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Settled batches outlive V8's default young generation (apps/consumption/README.md).
CMD ["node", "--max-semi-space-size=64", "dist/main.js"]

FROM runtime AS gateway-proxy
COPY --from=build /out/gateway-proxy /app
WORKDIR /app/apps/gateway-proxy
ENV AGN_PROXY_HOST=0.0.0.0 AGN_PROXY_PORT=8090
EXPOSE 8090
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+process.env.AGN_PROXY_PORT+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Requests in flight outlive V8's default young generation (apps/gateway-proxy/README.md).
CMD ["node", "--max-semi-space-size=64", "dist/main.js"]

FROM runtime AS api-gateway
COPY --from=build /out/api-gateway /app
WORKDIR /app/apps/api-gateway
ENV AGN_API_HOST=0.0.0.0 AGN_API_PORT=8080 AGN_DASHBOARD_DIR=/app/apps/dashboard/dist
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+process.env.AGN_API_PORT+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "dist/main.js"]
