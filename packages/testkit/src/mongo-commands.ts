import mongoose, { type Connection, type ConnectOptions } from "mongoose";
import { testBackends } from "./fixtures";

export interface SentMongoCommand {
  name: string;
  command: Record<string, unknown>;
}

const WRITES = new Set(["insert", "update", "delete", "findAndModify"]);
const READS = new Set(["find", "aggregate", "count", "distinct"]);

/**
 * A connection to the test MongoDB with a service's own `options` (and `urlOptions` in its
 * connection string, as an operator's MONGO_URL would carry them) that records the commands the
 * driver sends, so a test can see which write and read concerns reach the server.
 */
export async function connectRecordingMongo(
  options: ConnectOptions,
  urlOptions: Record<string, string> = {},
) {
  const url = new URL(testBackends().mongoUrl);
  for (const [name, value] of Object.entries(urlOptions)) url.searchParams.set(name, value);
  const connection: Connection = await mongoose
    .createConnection(url.toString(), { ...options, monitorCommands: true })
    .asPromise();
  const sent: SentMongoCommand[] = [];
  connection.getClient().on("commandStarted", (event) => {
    sent.push({ name: event.commandName, command: event.command });
  });
  return {
    connection,
    /** The CRUD writes sent since the last `clear()`. */
    writes: () => sent.filter((entry) => WRITES.has(entry.name)),
    /** The reads sent since the last `clear()`. */
    reads: () => sent.filter((entry) => READS.has(entry.name)),
    clear: () => {
      sent.length = 0;
    },
  };
}
