#!/usr/bin/env node
// Runs the TypeScript CLI through tsx in this same process, so `agentnet` works straight from a
// checkout. One process, not a wrapper around a child: a Ctrl-C reaches every process of the
// terminal's foreground group, and a wrapper passing its copy on would make it two; `kill <pid>`
// of this process reaches the CLI itself.
import { register } from "tsx/esm/api";

register();
await import("../src/main.ts");
