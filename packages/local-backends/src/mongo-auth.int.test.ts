import { execFile, execFileSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import mongoose from "mongoose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureMongo, startMongo } from "./backends";
import { mongoCredentialsFile, withMongoCredentials } from "./mongo-auth";
import { freePort } from "./ports";
import { probeMongo, waitUntil } from "./probe";
import { type Backend, startProcess } from "./process";
import { findRepoRoot } from "./root";

const { MongoClient } = mongoose.mongo;
const UNAUTHORIZED = 13;
const AUTHENTICATION_FAILED = 18;

const freshDir = () => mkdtempSync(join(tmpdir(), "agn-mongo-auth-"));
const freeUrl = async () => `mongodb://127.0.0.1:${await freePort()}/agentnet`;
const storedPassword = (dataDir: string) =>
  (JSON.parse(readFileSync(mongoCredentialsFile(dataDir), "utf8")) as { password: string }).password;

/** Runs `operation` with a client of `url`, closing it whatever happens. */
async function withClient<T>(url: string, operation: (client: mongoose.mongo.MongoClient) => Promise<T>) {
  const client = new MongoClient(url, { serverSelectionTimeoutMS: 5_000 });
  try {
    return await operation(client);
  } finally {
    await client.close();
  }
}

/** FerretDB as `agentnet up` started it before logins: whoever reaches the port reads and writes. */
async function startOpenFerretdb(dataDir: string, url: string): Promise<Backend> {
  const { port } = new URL(url);
  const storeDir = join(dataDir, "ferretdb");
  const started = startProcess(
    "ferretdb-open",
    join(findRepoRoot(), ".data", "tools", "ferretdb"),
    [
      "--handler=sqlite",
      `--sqlite-url=file:${storeDir}/`,
      `--state-dir=${storeDir}`,
      `--listen-addr=127.0.0.1:${port}`,
      "--debug-addr=-",
      "--telemetry=disable",
    ],
    join(dataDir, "logs"),
  );
  await waitUntil(async () => (await probeMongo(url)) === "answers", 30_000, "open FerretDB");
  return { url, origin: "started", engine: "ferretdb", stop: started.stop };
}

describe("FerretDB as startMongo starts it", () => {
  let dataDir: string;
  let anonymousUrl: string;
  let mongo: Backend;

  beforeAll(async () => {
    dataDir = freshDir();
    // Open like a `.data/` from an older checkout: only the files' own modes keep others out.
    chmodSync(dataDir, 0o755);
    anonymousUrl = await freeUrl();
    mongo = await startMongo({ url: anonymousUrl, dataDir });
  });

  afterAll(async () => {
    await mongo.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("refuses a client without a login: listing collections, reading and writing are each unauthorized", async () => {
    await withClient(anonymousUrl, async (client) => {
      const users = client.db().collection("users");
      await expect(client.db().listCollections().toArray()).rejects.toMatchObject({ code: UNAUTHORIZED });
      await expect(users.find().toArray()).rejects.toMatchObject({ code: UNAUTHORIZED });
      await expect(client.db().collection("tokens").insertOne({ owner: "someone" })).rejects.toMatchObject({
        code: UNAUTHORIZED,
      });
    });
  });

  it("refuses a wrong password", async () => {
    const wrong = withMongoCredentials(anonymousUrl, { username: "agentnet", password: "not-the-password" });
    await expect(withClient(wrong, (client) => client.connect())).rejects.toMatchObject({
      code: AUTHENTICATION_FAILED,
    });
  });

  it("admits the login of <data>/mongo-credentials.json, which the URL it returns carries", async () => {
    expect(mongo.url).toBe(
      withMongoCredentials(anonymousUrl, { username: "agentnet", password: storedPassword(dataDir) }),
    );
    expect(new URL(mongo.url).searchParams.get("authSource")).toBe("admin");
    const found = await withClient(mongo.url, async (client) => {
      await client
        .db()
        .collection("providers")
        .insertOne({ _id: "p1" as never, name: "kept" });
      return client
        .db()
        .collection("providers")
        .findOne({ _id: "p1" as never });
    });
    expect(found).toMatchObject({ name: "kept" });
  });

  it("keeps the login in a 0600 file and the database files in a 0700 directory", () => {
    expect(statSync(mongoCredentialsFile(dataDir)).mode & 0o777).toBe(0o600);
    expect(statSync(join(dataDir, "ferretdb")).mode & 0o777).toBe(0o700);
  });

  it("lets no other user of the host read the login or the data, find it on FerretDB's command line, or connect without it", async () => {
    const uid = Number(execFileSync("id", ["-u", "nobody"], { encoding: "utf8" }));
    const gid = Number(execFileSync("id", ["-g", "nobody"], { encoding: "utf8" }));
    // What a local user can reach: every file it may read under the data directory, the server's
    // command line and environment, and the port.
    const attempt = `
      const { readdirSync, readFileSync, statSync } = require("node:fs");
      const { join } = require("node:path");
      const { MongoClient } = require("mongoose").mongo;
      const [dataDir, storeDir, pid, url] = process.argv.slice(1);
      const outcome = (read) => { try { return read(); } catch (error) { return error.code; } };
      const readable = [];
      const walk = (dir) => {
        let names;
        try { names = readdirSync(dir); } catch { return; }
        for (const name of names) {
          const path = join(dir, name);
          if (statSync(path).isDirectory()) walk(path);
          else try { readable.push(readFileSync(path, "utf8")); } catch {}
        }
      };
      walk(dataDir);
      const client = new MongoClient(url, { serverSelectionTimeoutMS: 5000 });
      client.db().listCollections().toArray().then(() => "listed", (error) => error.code).then(async (anonymousList) => {
        await client.close();
        console.log(JSON.stringify({
          credentials: outcome(() => readFileSync(join(dataDir, "mongo-credentials.json"), "utf8")),
          storeDir: outcome(() => readdirSync(storeDir)),
          readable,
          commandLine: readFileSync("/proc/" + pid + "/cmdline", "utf8"),
          environment: outcome(() => readFileSync("/proc/" + pid + "/environ", "utf8")),
          anonymousList,
        }));
      });
    `;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["-e", attempt, dataDir, join(dataDir, "ferretdb"), String(mongo.pid), anonymousUrl],
      { uid, gid, cwd: join(findRepoRoot(), "packages", "local-backends") },
    );
    const seen = JSON.parse(stdout) as Record<string, unknown> & { readable: string[]; commandLine: string };
    const password = storedPassword(dataDir);
    expect(seen.credentials).toBe("EACCES");
    expect(seen.storeDir).toBe("EACCES");
    expect(seen.environment).toBe("EACCES");
    expect(seen.anonymousList).toBe(UNAUTHORIZED);
    expect(seen.commandLine).toContain("ferretdb");
    expect(seen.commandLine).not.toContain(password);
    expect(seen.readable.filter((text) => text.includes(password))).toEqual([]);
  });

  it("started again on the same data, as the fault suite does, admits the same login and keeps the documents", async () => {
    await mongo.stop();
    mongo = await startMongo({ url: anonymousUrl, dataDir });
    const found = await withClient(mongo.url, (client) =>
      client
        .db()
        .collection("providers")
        .findOne({ _id: "p1" as never }),
    );
    expect(found).toMatchObject({ name: "kept" });
    expect(await probeMongo(anonymousUrl)).toBe("refused");
  });
});

describe("data FerretDB kept before logins", () => {
  let dataDir: string;
  let url: string;

  beforeAll(async () => {
    dataDir = freshDir();
    url = await freeUrl();
    const open = await startOpenFerretdb(dataDir, url);
    await withClient(url, (client) => client.db().collection("accounts").insertOne({ name: "from before" }));
    await open.stop();
  });

  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it("gets the login on its first start with authentication, and keeps its documents", async () => {
    const mongo = await startMongo({ url, dataDir });
    try {
      expect(await probeMongo(url)).toBe("refused");
      const found = await withClient(mongo.url, (client) => client.db().collection("accounts").findOne());
      expect(found).toMatchObject({ name: "from before" });
    } finally {
      await mongo.stop();
    }
  });

  it("with a credentials file it was not set up with, fails at once saying so, and leaves nothing running", async () => {
    writeFileSync(
      mongoCredentialsFile(dataDir),
      JSON.stringify({ username: "agentnet", password: "another-password" }),
    );
    const started = Date.now();
    await expect(startMongo({ url, dataDir })).rejects.toThrow(
      /refuses the login in .*mongo-credentials\.json: that data was set up with another one/,
    );
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(await probeMongo(url)).toBe("down");
  });
});

describe("ensureMongo", () => {
  const dirs: string[] = [];
  const dir = () => {
    const made = freshDir();
    dirs.push(made);
    return made;
  };
  let stackDir: string;
  let stackUrl: string;
  let stack: Backend;
  let openUrl: string;
  let open: Backend;

  beforeAll(async () => {
    stackDir = dir();
    stackUrl = await freeUrl();
    stack = await startMongo({ url: stackUrl, dataDir: stackDir });
    openUrl = await freeUrl();
    open = await startOpenFerretdb(dir(), openUrl);
  });

  afterAll(async () => {
    await stack.stop();
    await open.stop();
    for (const made of dirs) rmSync(made, { recursive: true, force: true });
  });

  it("uses the server at the URL when it admits the login kept with the data (one an earlier stack started)", async () => {
    const mongo = await ensureMongo({ url: stackUrl, dataDir: stackDir });
    expect(mongo).toMatchObject({ origin: "external", url: stack.url });
  });

  it("uses a URL's own login as it is when the server admits it", async () => {
    const mongo = await ensureMongo({ url: stack.url, dataDir: dir() });
    expect(mongo).toMatchObject({ origin: "external", url: stack.url });
  });

  it("refuses at once, saying what to do, a server that wants another login than the one kept with the data", async () => {
    await expect(ensureMongo({ url: stackUrl, dataDir: dir() })).rejects.toThrow(
      /requires a login and refuses the one in .*mongo-credentials\.json; put its user in MONGO_URL/,
    );
  });

  it("refuses a URL whose password is wrong, without printing the password", async () => {
    const wrong = withMongoCredentials(stackUrl, { username: "agentnet", password: "wrong-secret" });
    const error = await ensureMongo({ url: wrong, dataDir: dir() }).catch((caught: Error) => caught);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(/refuses the login in its URL/);
    expect((error as Error).message).not.toContain("wrong-secret");
  });

  it("does not use a server that admits anyone: starts its own on a free port and says so", async () => {
    const mongo = await ensureMongo({ url: openUrl, dataDir: dir() });
    try {
      expect(mongo.origin).toBe("started");
      expect(mongo.note).toMatch(
        new RegExp(`port ${new URL(openUrl).port} is held by a MongoDB-wire server that admits anyone`),
      );
      expect(new URL(mongo.url).port).not.toBe(new URL(openUrl).port);
      expect(await probeMongo(mongo.url)).toBe("answers");
    } finally {
      await mongo.stop();
    }
  });

  it("uses a server that admits anyone only when told to", async () => {
    const mongo = await ensureMongo({ url: openUrl, dataDir: dir(), reuseUnauthenticated: true });
    expect(mongo).toMatchObject({
      origin: "external",
      url: openUrl,
      note: "admits clients without credentials",
    });
  });
});
