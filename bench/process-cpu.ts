import pidusage from "pidusage";
import psList from "ps-list";

/** Longer than any phase: pidusage forgets a process not asked about for this long. */
const MAX_AGE_MS = 3_600_000;

/** The process `launcherPid` started: a bench script runs in the node process its tsx launcher spawns. */
export async function launchedBy(launcherPid: number): Promise<number> {
  return (await psList()).find((entry) => entry.ppid === launcherPid)?.pid ?? launcherPid;
}

/**
 * The CPU each process took over a phase, in % of one core: the given processes and those of the
 * machine named in `byName` (nats-server, ferretdb), whose share of the two cores is what a
 * latency tail waits for. Call the returned function at the end of each phase; the first phase
 * starts now.
 */
export async function processCpu(pids: Record<string, number>, byName: string[]) {
  const running = await psList();
  const all = { ...pids };
  for (const name of byName) {
    const found = running.find((entry) => entry.name === name);
    if (found) all[name] = found.pid;
  }
  const options = { maxage: MAX_AGE_MS };
  await pidusage(Object.values(all), options);
  return async (): Promise<string> => {
    const stats = await pidusage(Object.values(all), options);
    return Object.entries(all)
      .map(([name, pid]) => `${name} ${Math.round(stats[pid]?.cpu ?? 0)} %`)
      .join(", ");
  };
}
