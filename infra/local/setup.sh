#!/usr/bin/env bash
# Installs everything the stack and its tests need on a fresh machine, and does nothing
# (quietly) when all of it is already there: pnpm, workspace dependencies, nats-server (a pinned
# version built from the Go module proxy), tmux and Chromium (tests), a MongoDB-wire server (mongod
# when on PATH, else FerretDB v1 built from the Go module proxy) and helm (the Helm chart's test,
# built from the Go module proxy).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
tools="$root/.data/tools"
mkdir -p "$tools"
# The stack's data (credentials, sealing key, databases, logs) is this user's alone.
chmod 700 "$root/.data"
say() { echo "setup: $*" >&2; }

# pnpm, at the version package.json pins.
pnpm_version="$(node -p "require('./package.json').packageManager.split('@')[1]")"
if ! command -v pnpm >/dev/null 2>&1 || [ "$(pnpm --version 2>/dev/null)" != "$pnpm_version" ]; then
  say "installing pnpm $pnpm_version"
  # npm rather than corepack: corepack insists on registry signatures that a mirror may not serve.
  npm install --global --force --silent --no-fund --no-audit "pnpm@$pnpm_version" >/dev/null 2>&1
fi

# Workspace dependencies: only when the lockfile or a manifest changed since the last install.
stamp="node_modules/.agentnet-install-stamp"
manifests_digest() {
  (cat pnpm-lock.yaml pnpm-workspace.yaml package.json apps/*/package.json packages/*/package.json e2e/package.json bench/package.json 2>/dev/null || true) | sha256sum | cut -d' ' -f1
}
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$(manifests_digest)" ]; then
  say "installing workspace dependencies"
  if [ "${CI:-}" = "true" ]; then frozen="--frozen-lockfile"; else frozen=""; fi
  pnpm install --silent $frozen --config.confirmModulesPurge=false
  manifests_digest > "$stamp"
fi

# nats-server with JetStream at a pinned version, built from the Go module proxy: Debian's v2.9.10
# loses KV TTLs after restarts in a three-node cluster (nats-io/nats-server#3653), which the cluster
# fault suite runs into; v2.10.29, on three nodes started together on a busy machine, sometimes
# elects a JetStream meta leader whose group leaves one node out for good (cluster_size 2: 2 of 27
# cold starts under load, none of 30 on v2.15.2), so three-replica streams find no peers.
# Everything that starts NATS runs this binary (`natsServerBinary` in
# @agentnet/local-backends). It is built beside the old one and renamed over it, so a server still
# running from the old one keeps running.
nats_version="v2.15.2"
if ! [ -x "$tools/nats-server" ] || [ "$("$tools/nats-server" --version 2>/dev/null)" != "nats-server: $nats_version" ]; then
  say "building nats-server $nats_version (once)"
  command -v go >/dev/null 2>&1 || { say "Go is required to build nats-server; install golang"; exit 1; }
  log="$(mktemp)"
  bin="$(mktemp -d "$tools/.nats-server.XXXXXX")"
  if ! GOBIN="$bin" go install -trimpath -ldflags "-s -w" "github.com/nats-io/nats-server/v2@$nats_version" >"$log" 2>&1; then
    cat "$log" >&2
    rm -rf "$bin"
    exit 1
  fi
  mv "$bin/nats-server" "$tools/nats-server"
  rm -rf "$bin" "$log"
fi

# tmux: the CLI's Ctrl-C tests press Ctrl-C in a real terminal (e2e/src/cli/ctrl-c.int.test.ts).
if ! command -v tmux >/dev/null 2>&1; then
  say "installing tmux"
  apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux >/dev/null
fi

# Debian's Chromium for the dashboard's browser tests (playwright-core drives it; no browser downloads).
if ! [ -x /usr/bin/chromium ]; then
  say "installing chromium"
  apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi

# A MongoDB-wire server: mongod when the machine has one, else FerretDB v1 with its SQLite backend.
ferretdb_version="v1.24.0"
if ! command -v mongod >/dev/null 2>&1 && ! [ -x "$tools/ferretdb" ]; then
  say "building FerretDB $ferretdb_version (once)"
  command -v go >/dev/null 2>&1 || { say "Go is required to build FerretDB; install golang or set MONGO_URL"; exit 1; }
  # `go install pkg@version` asks the proxy for the module's version list, which it refuses here;
  # downloading the exact version and building it ourselves avoids that call.
  moddir="$(cd "$(mktemp -d)" && go mod init agentnet-ferretdb >/dev/null 2>&1 && go mod download -json "github.com/FerretDB/FerretDB@$ferretdb_version" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).Dir))')"
  src="$(mktemp -d)/ferretdb"
  cp -r "$moddir" "$src" && chmod -R u+w "$src"
  # The release embeds its version from a file that only the project's own build task writes.
  echo "$ferretdb_version" > "$src/build/version/version.txt"
  (cd "$src" && go build -trimpath -o "$tools/ferretdb.tmp" ./cmd/ferretdb)
  mv "$tools/ferretdb.tmp" "$tools/ferretdb"
  rm -rf "$src"
fi

# helm for the Helm chart's test (e2e/src/helm), built from the Go module proxy: no release binary
# is downloaded. The version is stamped in as the project's own build does, so it can be checked.
helm_version="v3.22.0"
if ! [ -x "$tools/helm" ] || [ "$("$tools/helm" version --short 2>/dev/null)" != "$helm_version" ]; then
  say "building helm $helm_version (once, about two minutes)"
  command -v go >/dev/null 2>&1 || { say "Go is required to build helm; install golang"; exit 1; }
  log="$(mktemp)"
  if ! GOBIN="$tools" go install -trimpath -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$helm_version" \
    "helm.sh/helm/v3/cmd/helm@$helm_version" >"$log" 2>&1; then
    cat "$log" >&2
    exit 1
  fi
  rm -f "$log"
fi
