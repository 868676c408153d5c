import { setTimeout } from "node:timers/promises";
import { maxEventBytes, maxPayloadOf, type NatsConnection } from "@agentnet/bus";
import { findCatalogProvider } from "@agentnet/catalog";
import { Events, GatewayRequestEvent } from "@agentnet/contracts";
import { createLogger } from "@agentnet/service-kit";
import { connectTestBus, eventually, uniqueId } from "@agentnet/testkit";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ratesFor } from "../domain/estimate";
import { makeCaller, makeProvider } from "../test-support/factories";
import { openai as openAiWire } from "../wires/openai";
import { AdmissionAnnouncer } from "./admission";
import type { RequestRecord } from "./build";
import { TRUNCATED_MARK } from "./fit";

let proxyBus: NatsConnection;
let observer: NatsConnection;
beforeAll(async () => {
  proxyBus = await connectTestBus("gateway-proxy");
  observer = await connectTestBus("observer");
});
afterAll(async () => {
  await proxyBus?.drain();
  await observer?.drain();
});

const catalog = findCatalogProvider("openai_api");
if (!catalog) throw new Error("openai_api is in the catalog");
const pricing = ratesFor(makeProvider(), catalog, "gpt-4o", openAiWire);
const admitted = { input_tokens: 100, output_tokens: 50 };

const makeRecord = (overrides: Partial<RequestRecord> = {}): RequestRecord => ({
  id: uniqueId("req"),
  startedAt: Date.now(),
  endedAt: Date.now(),
  caller: makeCaller(),
  logged: true,
  wire: openAiWire,
  sourceIp: "127.0.0.1",
  method: "POST",
  host: "api.openai.com",
  path: "/v1/chat/completions",
  providerName: "OpenAI",
  providerId: "prov_openai",
  policyId: "pol_1",
  model: "gpt-4o",
  sessionId: "",
  decision: "allow",
  denyReason: "",
  status: 0,
  stream: false,
  metered: true,
  ...overrides,
});

/** Every admission message published for `proxyId`, as its raw payloads. */
async function admissionsOf(proxyId: string) {
  const messages: Uint8Array[] = [];
  observer.subscribe(Events.proxyAdmitted(proxyId), {
    callback: (_error, msg) => {
      messages.push(msg.data);
    },
  });
  await observer.flush();
  const events = () =>
    messages.flatMap((data) =>
      new TextDecoder()
        .decode(data)
        .split("\n")
        .map((line) => GatewayRequestEvent.parse(JSON.parse(line.slice(line.indexOf(" ") + 1)))),
    );
  return { messages, events };
}

describe("AdmissionAnnouncer", () => {
  it("announces a request with a 1.1 MB model name, its model cut to fit the bus, without throwing", async () => {
    const proxyId = uniqueId("proxy");
    const seen = await admissionsOf(proxyId);
    const announcer = new AdmissionAnnouncer(proxyBus, proxyId, createLogger("admission-test", "silent"));
    const giant = makeRecord({ model: "m".repeat(1_100_000) });
    announcer.announce(giant, admitted, pricing);
    announcer.announce(makeRecord(), admitted, pricing);
    await eventually(() => seen.events().length === 2);
    const [cut, normal] = seen.events();
    expect(cut?.id).toBe(giant.id);
    expect(cut?.model.endsWith(TRUNCATED_MARK)).toBe(true);
    expect(Buffer.byteLength(JSON.stringify(cut))).toBeLessThanOrEqual(maxEventBytes(proxyBus));
    expect(cut?.input_tokens).toBe(100);
    expect(normal?.model).toBe("gpt-4o");
    expect(announcer.status()).toEqual({ truncated: 1, dropped: 0 });
  });

  it("splits one turn's admissions over messages that each fit max_payload", async () => {
    const proxyId = uniqueId("proxy");
    const seen = await admissionsOf(proxyId);
    const announcer = new AdmissionAnnouncer(proxyBus, proxyId, createLogger("admission-test", "silent"));
    // Three admissions of ~600 KB each: no two fit one message.
    const records = Array.from({ length: 3 }, () => makeRecord({ model: "m".repeat(600_000) }));
    for (const record of records) announcer.announce(record, admitted, pricing);
    await eventually(() => seen.events().length === 3);
    expect(seen.messages).toHaveLength(3);
    for (const data of seen.messages) expect(data.length).toBeLessThanOrEqual(maxPayloadOf(proxyBus));
    expect(seen.events().map((event) => event.id)).toEqual(records.map((record) => record.id));
    expect(announcer.status()).toEqual({ truncated: 0, dropped: 0 });
  });

  it("drops, with one warning and a count, an admission that cannot be cut to fit", async () => {
    const proxyId = uniqueId("proxy");
    const seen = await admissionsOf(proxyId);
    const logger = createLogger("admission-test", "silent");
    const warn = vi.spyOn(logger, "warn");
    const announcer = new AdmissionAnnouncer(proxyBus, proxyId, logger);
    // The caller's name comes from the configuration and is not cut.
    announcer.announce(
      makeRecord({ caller: makeCaller({ name: "n".repeat(1_100_000) }) }),
      admitted,
      pricing,
    );
    const next = makeRecord();
    announcer.announce(next, admitted, pricing);
    await eventually(() => seen.events().length === 1);
    expect(seen.events()[0]?.id).toBe(next.id);
    expect(announcer.status()).toEqual({ truncated: 0, dropped: 1 });
    expect(warn).toHaveBeenCalledTimes(1);
  });

  it("sends admissions right behind the upstream writes of their turn, and a request's own before its event", async () => {
    const proxyId = uniqueId("proxy");
    const subject = Events.proxyAdmitted(proxyId);
    const seen = await admissionsOf(proxyId);
    const announcer = new AdmissionAnnouncer(proxyBus, proxyId, createLogger("admission-test", "silent"));
    const texts = () => seen.messages.map((data) => new TextDecoder().decode(data));
    // Markers published on the same connection stand for other writes: the observer sees the order sent.
    const forwarded = makeRecord();
    announcer.announce(forwarded, admitted, pricing);
    // As undici queues a reused connection's write at dispatch, after the announcement.
    setImmediate(() => proxyBus.publish(subject, "upstream write"));
    announcer.behindUpstreamWrites();
    await eventually(() => seen.messages.length === 2);
    expect(texts()[0]).toBe("upstream write");
    expect(texts()[1]?.startsWith(`${forwarded.id} {`)).toBe(true);

    const answered = makeRecord();
    announcer.announce(answered, admitted, pricing);
    announcer.flushBefore("req_of_another_admission");
    proxyBus.publish(subject, "event of another request");
    announcer.flushBefore(answered.id);
    proxyBus.publish(subject, "its event");
    await eventually(() => seen.messages.length === 5);
    await setTimeout(50);
    await observer.flush();
    expect(texts()).toHaveLength(5);
    expect(texts()[2]).toBe("event of another request");
    expect(texts()[3]?.startsWith(`${answered.id} {`)).toBe(true);
    expect(texts()[4]).toBe("its event");
  });

  it("reports a publish nats.js refuses instead of throwing from its timer", async () => {
    const logger = createLogger("admission-test", "silent");
    const warn = vi.spyOn(logger, "warn");
    // A subject with a space is one nats.js refuses, synchronously, as it does an oversized payload.
    const announcer = new AdmissionAnnouncer(proxyBus, "no such proxy", logger);
    announcer.announce(makeRecord(), admitted, pricing);
    announcer.flush();
    expect(warn).toHaveBeenCalledTimes(1);
  });
});
