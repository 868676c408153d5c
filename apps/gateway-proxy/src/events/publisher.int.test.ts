import {
  ensureRequestStream,
  isUnpublishable,
  maxEventBytes,
  type NatsConnection,
  publishEvent,
} from "@agentnet/bus";
import { type GatewayRequestEvent, REQUESTS_STREAM } from "@agentnet/contracts";
import { createLogger } from "@agentnet/service-kit";
import { connectTestBus, eventually, makeEvent, uniqueId } from "@agentnet/testkit";
import { DiscardPolicy, jetstreamManager } from "@nats-io/jetstream";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { fitEvent, TRUNCATED_MARK } from "./fit";
import { BufferedPublisher } from "./publisher";

const logger = createLogger("publisher-test", "silent");
let observer: NatsConnection;

beforeAll(async () => {
  observer = await connectTestBus("observer");
  await ensureRequestStream(observer);
});
afterAll(async () => {
  await observer?.drain();
});

const noneStored = async () => new Set<string>();

/** Collects what reaches a subject: what JetStream stored is also delivered to core subscribers. */
function received(subject: string) {
  const ids: string[] = [];
  observer.subscribe(subject, {
    callback: (_error, msg) => {
      ids.push(msg.json<{ id: string }>().id);
    },
  });
  return ids;
}

describe("BufferedPublisher", () => {
  it("buffers while its connection is gone and flushes everything once one is back", async () => {
    const subject = `agn.requests.${uniqueId("acc")}`;
    const seen = received(subject);
    await observer.flush();
    let connection = await connectTestBus("proxy-1");
    const publisher = new BufferedPublisher({
      publish: (s, event, msgId) => publishEvent(connection, s, event, msgId),
      storedCheck: noneStored,
      logger,
      maxBuffered: 100,
      retryMs: 60_000,
    });
    // What waits for each event (the leases its request held on) hears when the stream has it.
    const gone: string[] = [];
    publisher.enqueue(subject, { id: "e1" }, "e1", undefined, () => gone.push("e1"));
    await eventually(() => seen.length === 1);
    expect(gone).toEqual(["e1"]);

    await connection.close();
    for (const id of ["e2", "e3", "e4"])
      publisher.enqueue(subject, { id }, id, undefined, () => gone.push(id));
    await eventually(() => publisher.pending === 3);
    expect(seen).toEqual(["e1"]);
    expect(gone).toEqual(["e1"]);

    connection = await connectTestBus("proxy-2");
    expect(await publisher.flush(5_000)).toBe(true);
    await eventually(() => seen.length === 4);
    expect([...seen].sort()).toEqual(["e1", "e2", "e3", "e4"]);
    expect([...gone].sort()).toEqual(["e1", "e2", "e3", "e4"]);
    publisher.stop();
    await connection.close();
  });

  it("drops the oldest beyond its bound and counts them", async () => {
    const subject = `agn.requests.${uniqueId("acc")}`;
    const seen = received(subject);
    await observer.flush();
    let connection = await connectTestBus("proxy-3");
    await connection.close();
    const publisher = new BufferedPublisher({
      publish: (s, event, msgId) => publishEvent(connection, s, event, msgId),
      storedCheck: noneStored,
      logger,
      maxBuffered: 3,
      retryMs: 60_000,
    });
    const gone: string[] = [];
    for (let i = 1; i <= 5; i++)
      publisher.enqueue(subject, { id: `e${i}` }, `e${i}`, undefined, () => gone.push(`e${i}`));
    await eventually(() => publisher.pending === 3);
    expect(publisher.dropped).toBe(2);
    // A dropped event releases what waited for it: it never reaches the stream.
    expect(gone).toEqual(["e1", "e2"]);
    // Said, not silent: what /status reports while publishing fails.
    await eventually(() => !publisher.status().publishing);
    expect(publisher.status()).toMatchObject({
      publishing: false,
      pending: 3,
      dropped: 2,
      last_error: expect.any(String),
      failing_since: expect.any(String),
    });
    connection = await connectTestBus("proxy-4");
    expect(await publisher.flush(5_000)).toBe(true);
    await eventually(() => seen.length === 3);
    expect([...seen].sort()).toEqual(["e3", "e4", "e5"]);
    expect(publisher.status()).toMatchObject({ publishing: true, pending: 0, published: 3, dropped: 2 });
    publisher.stop();
    await connection.close();
  });

  it("a duplicate publish after a lost ack is stored once (Nats-Msg-Id)", async () => {
    const subject = `agn.requests.${uniqueId("acc")}`;
    const connection = await connectTestBus("proxy-5");
    const first = await publishEvent(connection, subject, { id: "same" }, "same-id");
    const again = await publishEvent(connection, subject, { id: "same" }, "same-id");
    expect(again.duplicate).toBe(true);
    expect(again.seq).toBe(first.seq);
    await connection.close();
  });

  it("asks before publishing again past the duplicate window, and publishes only what was not stored", async () => {
    const subject = `agn.requests.${uniqueId("acc")}`;
    const seen = received(subject);
    await observer.flush();
    const connection = await connectTestBus("proxy-6");
    let now = 0;
    const sentAfterWindow: string[] = [];
    const asked: string[][] = [];
    const publisher = new BufferedPublisher<{ id: string }>({
      // Until the window has passed, every attempt fails: "kept" is stored (its ack lost each
      // time), "lost" never reaches the server.
      publish: async (s, event, msgId) => {
        if (now > 0) {
          sentAfterWindow.push(msgId);
          return publishEvent(connection, s, event, msgId);
        }
        if (msgId === "kept") await publishEvent(connection, s, event, msgId);
        throw new Error("publish timed out");
      },
      // What the stream delivered, as telemetry would answer; undecided the first time.
      storedCheck: async (events) => {
        asked.push(events.map((event) => event.id));
        if (asked.length === 1) return undefined;
        return new Set(events.map((event) => event.id).filter((id) => seen.includes(id)));
      },
      logger,
      maxBuffered: 10,
      retryMs: 50,
      duplicateWindowMs: 120_000,
      clock: () => now,
    });
    publisher.enqueue(subject, { id: "kept" }, "kept");
    publisher.enqueue(subject, { id: "lost" }, "lost");
    await eventually(() => !publisher.status().publishing);
    now = 121_000;
    expect(await publisher.flush(5_000)).toBe(true);
    expect(asked.map((ids) => ids.sort())).toEqual([
      ["kept", "lost"],
      ["kept", "lost"],
    ]);
    expect(sentAfterWindow).toEqual(["lost"]);
    await eventually(() => seen.includes("lost"));
    expect(publisher.status()).toMatchObject({ published: 1, found_stored: 1, awaiting_stored_check: 0 });
    publisher.stop();
    await connection.close();
  });
});

describe("an event the bus can never carry", () => {
  /** What reaches a subject, whole. */
  function receivedEvents(subject: string) {
    const events: GatewayRequestEvent[] = [];
    observer.subscribe(subject, {
      callback: (_error, msg) => {
        events.push(msg.json<GatewayRequestEvent>());
      },
    });
    return events;
  }

  it("is refused by publishEvent before it is sent, as unpublishable, with the limit to fit", async () => {
    const connection = await connectTestBus("proxy-7");
    const event = makeEvent({ model: "m".repeat(1024 * 1024) });
    const error = await publishEvent(connection, `agn.requests.${uniqueId("acc")}`, event, event.id).catch(
      (e: unknown) => e,
    );
    expect(isUnpublishable(error)).toBe(true);
    expect(error).toMatchObject({ limitBytes: maxEventBytes(connection) });
    await connection.close();
  });

  it("is published once with its giant model name cut to fit, and publishing goes on", async () => {
    const subject = `agn.requests.${uniqueId("acc")}`;
    const seen = receivedEvents(subject);
    await observer.flush();
    const connection = await connectTestBus("proxy-8");
    const logger = createLogger("publisher-test", "silent");
    const warn = vi.spyOn(logger, "warn");
    const publisher = new BufferedPublisher<GatewayRequestEvent>({
      publish: (s, event, msgId) => publishEvent(connection, s, event, msgId),
      storedCheck: noneStored,
      shrink: fitEvent,
      logger,
      maxBuffered: 10,
      retryMs: 50,
    });
    const giant = makeEvent({ model: "m".repeat(1024 * 1024), decision: "deny" });
    const next = makeEvent();
    publisher.enqueue(subject, giant, giant.id);
    publisher.enqueue(subject, next, next.id);
    expect(await publisher.flush(5_000)).toBe(true);
    await eventually(() => seen.length === 2);
    const cut = seen.find((event) => event.id === giant.id);
    expect(cut?.model.endsWith(TRUNCATED_MARK)).toBe(true);
    expect(cut).toMatchObject({ decision: "deny", account_id: giant.account_id });
    expect(seen.find((event) => event.id === next.id)?.model).toBe("gpt-4o");
    expect(publisher.status()).toMatchObject({
      publishing: true,
      pending: 0,
      published: 2,
      truncated: 1,
      unpublishable: 0,
    });
    expect(warn).toHaveBeenCalledTimes(1);
    publisher.stop();
    await connection.close();
  });

  it("is dropped with one log line and counted when it cannot be cut to fit, never retried", async () => {
    const subject = `agn.requests.${uniqueId("acc")}`;
    const seen = receivedEvents(subject);
    await observer.flush();
    const connection = await connectTestBus("proxy-9");
    const logger = createLogger("publisher-test", "silent");
    const warn = vi.spyOn(logger, "warn");
    const attempts: string[] = [];
    const publisher = new BufferedPublisher<GatewayRequestEvent>({
      publish: (s, event, msgId) => {
        attempts.push(msgId);
        return publishEvent(connection, s, event, msgId);
      },
      storedCheck: noneStored,
      shrink: fitEvent,
      logger,
      maxBuffered: 10,
      retryMs: 50,
    });
    // The caller's name comes from the configuration and is not cut.
    const hopeless = makeEvent({ user_name: "n".repeat(1024 * 1024) });
    publisher.enqueue(subject, hopeless, hopeless.id);
    expect(await publisher.flush(5_000)).toBe(true);
    // Several retry periods later, still the one attempt.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(attempts).toEqual([hopeless.id]);
    expect(publisher.status()).toMatchObject({
      publishing: true,
      pending: 0,
      unpublishable: 1,
      truncated: 0,
    });
    expect(warn).toHaveBeenCalledTimes(1);

    const next = makeEvent();
    publisher.enqueue(subject, next, next.id);
    await eventually(() => seen.length === 1);
    expect(seen[0]?.id).toBe(next.id);
    publisher.stop();
    await connection.close();
  });

  it("is unpublishable when the stream refuses it (larger than the stream takes)", async () => {
    const jsm = await jetstreamManager(observer);
    const stream = uniqueId("SMALL");
    const subject = `small.${uniqueId("s")}`;
    await jsm.streams.add({ name: stream, subjects: [subject], max_msg_size: 1_000 });
    const error = await publishEvent(observer, subject, makeEvent({ model: "m".repeat(2_000) }), "x").catch(
      (e: unknown) => e,
    );
    expect(isUnpublishable(error)).toBe(true);
    expect(error).toMatchObject({ limitBytes: undefined });
    await jsm.streams.delete(stream);
  });
});

describe("the request stream", () => {
  it("is bounded in bytes, discarding the oldest events, so a full disk never stops publishing", async () => {
    const limit = 64 * 1024 * 1024;
    await ensureRequestStream(observer, ["agn.requests.>"], { maxBytes: limit });
    const info = await (await jetstreamManager(observer)).streams.info(REQUESTS_STREAM);
    expect(info.config).toMatchObject({ max_bytes: limit, discard: DiscardPolicy.Old });
    await ensureRequestStream(observer);
  });
});
