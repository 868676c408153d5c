import { readFileSync } from "node:fs";
import { createServer } from "node:net";

/** Where the ports come from that the OS hands out for outgoing connections (Linux's default when unreadable). */
function ephemeralPortRange(): { low: number; high: number } {
  try {
    const [low, high] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8")
      .trim()
      .split(/\s+/)
      .map(Number);
    if (low && high) return { low, high };
  } catch {}
  return { low: 32768, high: 60999 };
}

/** Whether a listener could bind `host:port` now. */
export const portIsFree = (host: string, port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });

/** A port free on loopback right now, picked by the OS (`listen(0)`): from its ephemeral range. */
const osPickedPort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });

/** Lowest port handed out. */
const LOWEST_PORT = 10_000;
/** Ports left above the one handed out, outside the ephemeral range: room for a caller's block of ports in a row. */
const ROOM_ABOVE = 32;

/** A run of `count` ports from `from` up. */
export interface PortStretch {
  from: number;
  count: number;
}

/**
 * The stretches of ports from `LOWEST_PORT` up outside the ephemeral range `low`–`high`, each
 * leaving `ROOM_ABOVE` ports free above it: below the range, and above it.
 */
export function portsOutside({ low, high }: { low: number; high: number }): PortStretch[] {
  const aboveFrom = Math.max(high + 1, LOWEST_PORT);
  return [
    { from: LOWEST_PORT, count: low - ROOM_ABOVE - LOWEST_PORT },
    { from: aboveFrom, count: 65_536 - ROOM_ABOVE - aboveFrom },
  ].filter((stretch) => stretch.count > 0);
}

/** This host's `portsOutside` its ephemeral range, read once. */
let outsideEphemeralRange: PortStretch[] | undefined;

/** The `index`th port of `stretches` taken one after the other. */
function portAt(stretches: readonly PortStretch[], index: number): number | undefined {
  let rest = index;
  for (const stretch of stretches) {
    if (rest < stretch.count) return stretch.from + rest;
    rest -= stretch.count;
  }
  return undefined;
}

/**
 * A TCP port free on loopback right now, picked at random outside the OS's ephemeral range: a port
 * the OS picks itself (`listen(0)`) is one it may hand to any process's next outgoing connection
 * before the caller listens on it, and a service started seconds later (after its stack opened
 * hundreds of connections) then fails with EADDRINUSE. On a host whose ephemeral range leaves no
 * room outside it, or where no free port turns up there, the OS picks.
 */
export async function freePort(): Promise<number> {
  outsideEphemeralRange ??= portsOutside(ephemeralPortRange());
  const stretches = outsideEphemeralRange;
  const total = stretches.reduce((sum, stretch) => sum + stretch.count, 0);
  for (let attempt = 0; total > 0 && attempt < 100; attempt++) {
    const port = portAt(stretches, Math.floor(Math.random() * total));
    if (port !== undefined && (await portIsFree("127.0.0.1", port))) return port;
  }
  return osPickedPort();
}

/** `count` free ports, distinct from each other and from `excluded`. */
export async function freePorts(count: number, excluded: readonly number[] = []): Promise<number[]> {
  const ports: number[] = [];
  for (let attempt = 0; ports.length < count && attempt < 100; attempt++) {
    const port = await freePort();
    if (!ports.includes(port) && !excluded.includes(port)) ports.push(port);
  }
  if (ports.length < count) throw new Error(`found ${ports.length} of ${count} distinct free ports`);
  return ports;
}
