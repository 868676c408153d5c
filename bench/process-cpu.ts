import { readdirSync, readFileSync } from "node:fs";

const CLOCK_TICKS_PER_SECOND = 100;

/**
 * CPU time (user + system, ms) of a process and all its descendants: a service started through tsx
 * is a wrapper process with the service as its child. CPU per request is steadier than req/s on a
 * shared machine, where a neighbour's burst moves throughput but not the work each request costs.
 */
export function processTreeCpuMs(pid: number): number {
  let ms = 0;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
    ms = ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const children = readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").trim();
      for (const child of children === "" ? [] : children.split(" ")) ms += processTreeCpuMs(Number(child));
    }
  } catch {
    // The process ended while being read: it costs nothing more.
  }
  return ms;
}
