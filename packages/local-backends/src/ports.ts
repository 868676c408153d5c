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

/**
 * Lowest port handed out, and how many ports are kept free below the ephemeral range: room for a
 * caller's block of ports in a row above the one it got.
 */
const LOWEST_PORT = 10_000;
const ROOM_ABOVE = 32;

/**
 * A TCP port free on loopback right now, picked at random below the OS's ephemeral range: a port
 * the OS picks itself (`listen(0)`) is one it may hand to any process's next outgoing connection
 * before the caller listens on it, and a service started seconds later (after its stack opened
 * hundreds of connections) then fails with EADDRINUSE.
 */
export async function freePort(): Promise<number> {
  const { low, high } = ephemeralPortRange();
  const candidates = (low > LOWEST_PORT + ROOM_ABOVE ? low : 65_536) - ROOM_ABOVE - LOWEST_PORT;
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = LOWEST_PORT + Math.floor(Math.random() * candidates);
    if ((port < low || port > high) && (await portIsFree("127.0.0.1", port))) return port;
  }
  throw new Error(`no free port found in 100 tries between ${LOWEST_PORT} and ${LOWEST_PORT + candidates}`);
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
