import { randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

/** The user a MongoDB-wire server started here admits; it lives in `admin` (`authSource=admin`). */
export interface MongoCredentials {
  username: string;
  password: string;
}

/** The credentials of the server whose data is under `dataDir`: they belong with that data. */
export const mongoCredentialsFile = (dataDir: string) => join(dataDir, "mongo-credentials.json");

/**
 * The credentials in `file`: generated once (mode 0600, like the bus credentials) and read from
 * there afterwards, so a server restarted on the same data admits the same user.
 */
export function localMongoCredentials(file: string): MongoCredentials {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const generated: MongoCredentials = {
    username: "agentnet",
    password: randomBytes(24).toString("base64url"),
  };
  try {
    writeFileSync(file, `${JSON.stringify(generated, null, 2)}\n`, { mode: 0o600, flag: "wx" });
  } catch (error) {
    // Written before (or by a concurrent start on the same data): that one holds.
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  chmodSync(file, 0o600);
  const stored = JSON.parse(readFileSync(file, "utf8")) as Partial<MongoCredentials>;
  if (typeof stored.username !== "string" || typeof stored.password !== "string") {
    throw new Error(`${file} does not hold a "username" and a "password"`);
  }
  return { username: stored.username, password: stored.password };
}

/**
 * True when `url` brings a login of its own: a user (`mongodb://user:password@host/...`) or a
 * mechanism that needs none in the URL (`authMechanism=MONGODB-X509`).
 */
export const carriesMongoCredentials = (url: string) =>
  /^mongodb(\+srv)?:\/\/[^/@]+@/.test(url) || /[?&]authMechanism=/i.test(url);

/** `url` logging in as `credentials`, whose user is kept in the `admin` database. */
export function withMongoCredentials(url: string, credentials: MongoCredentials): string {
  const parsed = new URL(url);
  parsed.username = credentials.username;
  parsed.password = credentials.password;
  parsed.searchParams.set("authSource", "admin");
  return parsed.toString();
}

/** `url` fit to print or log: its password replaced by `***`. */
export const redactMongoUrl = (url: string) =>
  url.replace(/^(mongodb(?:\+srv)?:\/\/[^:/@]*:)[^/@]*@/, "$1***@");
