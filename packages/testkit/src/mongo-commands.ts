import mongoose, { type Connection, type ConnectOptions } from "mongoose";
import { testBackends } from "./fixtures";

export interface SentMongoCommand {
  name: string;
  command: Record<string, unknown>;
}

const WRITES = new Set(["insert", "update", "delete", "findAndModify"]);
const READS = new Set(["find", "aggregate", "count", "distinct"]);

/**
 * A connection to the test MongoDB with a service's own `options` that records the commands the
 * driver sends, so a test can see which write and read concerns reach the server.
 */
export async function connectRecordingMongo(options: ConnectOptions) {
  const connection: Connection = await mongoose
    .createConnection(testBackends().mongoUrl, { ...options, monitorCommands: true })
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
