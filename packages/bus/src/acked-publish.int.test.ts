import { inboxPrefix } from "@agentnet/contracts";
import { connectTestBus, uniqueId } from "@agentnet/testkit";
import { JetStreamApiError, JetStreamError, jetstreamManager } from "@nats-io/jetstream";
import { errors, headers } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AckedPublisher } from "./acked-publish";
import type { NatsConnection } from "./index";

let operator: NatsConnection;
const streams: string[] = [];
const encoder = new TextEncoder();

beforeAll(async () => {
  operator = await connectTestBus("operator");
});
afterAll(async () => {
  const jsm = await jetstreamManager(operator);
  await Promise.all(streams.map((stream) => jsm.streams.delete(stream)));
  await operator?.close();
});

/** A subject a stream of this test's own stores. */
async function streamedSubject(config: { max_msg_size?: number } = {}): Promise<string> {
  const stream = uniqueId("ACKED");
  const subject = `acked.${uniqueId("s")}`;
  await (await jetstreamManager(operator)).streams.add({ name: stream, subjects: [subject], ...config });
  streams.push(stream);
  return subject;
}

const withId = (msgId: string) => {
  const header = headers();
  header.set("Nats-Msg-Id", msgId);
  return header;
};

/** How long `promise` took to reject, and with what. */
async function rejection(promise: Promise<unknown>): Promise<{ error: unknown; ms: number }> {
  const started = performance.now();
  const error = await promise.then(
    () => new Error("resolved"),
    (e: unknown) => e,
  );
  return { error, ms: performance.now() - started };
}

describe("AckedPublisher", () => {
  it("resolves each of many concurrent publishes with its own stream sequence, a repeated id as a duplicate", async () => {
    const subject = await streamedSubject();
    const publisher = new AckedPublisher(operator);
    const acks = await Promise.all(
      Array.from({ length: 1_000 }, (_, i) =>
        publisher.publish(subject, encoder.encode(`${i}`), withId(`m${i}`)),
      ),
    );
    expect(new Set(acks.map((ack) => ack.seq)).size).toBe(1_000);
    expect(acks.every((ack) => ack.duplicate === false)).toBe(true);
    const again = await publisher.publish(subject, encoder.encode("0"), withId("m0"));
    expect(again).toMatchObject({ duplicate: true, seq: acks[0]?.seq });
  });

  it("rejects at once, as the stream's refusal, what the stream will not take", async () => {
    const subject = await streamedSubject({ max_msg_size: 100 });
    const publisher = new AckedPublisher(operator);
    const { error } = await rejection(publisher.publish(subject, new Uint8Array(200), withId("big")));
    expect(error).toBeInstanceOf(JetStreamApiError);
    expect((error as JetStreamApiError).status).toBe(400);
  });

  it("rejects at once when no stream takes the subject, caused by no responders", async () => {
    const publisher = new AckedPublisher(operator);
    const { error, ms } = await rejection(
      publisher.publish(`unstreamed.${uniqueId("s")}`, encoder.encode("x"), withId("x")),
    );
    expect((error as Error).cause).toBeInstanceOf(errors.NoRespondersError);
    expect(ms).toBeLessThan(1_000);
  });

  it("fails a publish whose ack does not come in time, and takes the next one", async () => {
    const silent = `silent.${uniqueId("s")}`;
    // Someone hears the subject (so the server reports no missing responder) but nobody acks.
    operator.subscribe(silent, { callback: () => undefined });
    await operator.flush();
    const publisher = new AckedPublisher(operator, { ackTimeoutMs: 300 });
    const { error, ms } = await rejection(publisher.publish(silent, encoder.encode("x"), withId("x")));
    expect(error).toBeInstanceOf(errors.TimeoutError);
    expect(ms).toBeGreaterThanOrEqual(300);
    expect(ms).toBeLessThan(1_000);
    const subject = await streamedSubject();
    await expect(publisher.publish(subject, encoder.encode("y"), withId("y"))).resolves.toMatchObject({
      duplicate: false,
    });
  });

  it("rejects an answer that is not an ack, and keeps reading the connection", async () => {
    const impostor = `impostor.${uniqueId("s")}`;
    operator.subscribe(impostor, {
      callback: (_error, msg) => {
        msg.respond(encoder.encode("null"));
      },
    });
    await operator.flush();
    const publisher = new AckedPublisher(operator);
    const { error } = await rejection(publisher.publish(impostor, encoder.encode("x"), withId("x")));
    expect(error).toBeInstanceOf(JetStreamError);
    expect((error as Error).message).toBe("invalid ack response");
    const subject = await streamedSubject();
    await expect(publisher.publish(subject, encoder.encode("y"), withId("y"))).resolves.toMatchObject({
      duplicate: false,
    });
  });

  it("rejects a publish the server does not permit without waiting for the ack timeout", async () => {
    const telemetry = await connectTestBus("telemetry");
    const publisher = new AckedPublisher(telemetry, { inboxPrefix: inboxPrefix("telemetry") });
    const { error, ms } = await rejection(
      publisher.publish(`agn.requests.${uniqueId("acc")}`, encoder.encode("x"), withId("x")),
    );
    expect(error).toBeInstanceOf(errors.PermissionViolationError);
    expect(ms).toBeLessThan(2_000);
    await telemetry.close();
  });

  it("rejects what waits when its connection closes, and every publish after", async () => {
    const nc = await connectTestBus("operator");
    const silent = `silent.${uniqueId("s")}`;
    nc.subscribe(silent, { callback: () => undefined });
    let ended = false;
    const publisher = new AckedPublisher(nc, {
      onEnd: () => {
        ended = true;
      },
    });
    const waiting = rejection(publisher.publish(silent, encoder.encode("x"), withId("x")));
    await nc.flush();
    await nc.close();
    const { error, ms } = await waiting;
    expect(error).toBeInstanceOf(errors.ClosedConnectionError);
    expect(ms).toBeLessThan(1_000);
    expect(ended).toBe(true);
    await expect(publisher.publish(silent, encoder.encode("y"), withId("y"))).rejects.toBeInstanceOf(
      errors.ClosedConnectionError,
    );
  });
});
