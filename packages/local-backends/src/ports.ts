import { createServer } from "node:net";

/** A TCP port free on loopback right now (the OS picks it). */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });

/**
 * `count` free ports, distinct from each other and from `excluded`: the OS may hand back a port it
 * just gave, since each is released before the next is asked for.
 */
export async function freePorts(count: number, excluded: readonly number[] = []): Promise<number[]> {
  const ports: number[] = [];
  for (let attempt = 0; ports.length < count && attempt < 100; attempt++) {
    const port = await freePort();
    if (!ports.includes(port) && !excluded.includes(port)) ports.push(port);
  }
  if (ports.length < count) throw new Error(`found ${ports.length} of ${count} distinct free ports`);
  return ports;
}
