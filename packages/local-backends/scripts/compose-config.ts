/** Writes infra/nats/nats-server.conf from the bus permissions (see src/compose.ts). */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { composeNatsConfig } from "../src/compose";
import { findRepoRoot } from "../src/root";

writeFileSync(join(findRepoRoot(), "infra", "nats", "nats-server.conf"), composeNatsConfig());
