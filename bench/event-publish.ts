/**
 * What publishing one request event costs the proxy, by the way it reaches JetStream: the proxy's
 * own `publishEvent` (a JetStream publish awaiting its ack, 256 in flight as the proxy's buffer
 * allows, each a core publish with a reply subject and its waiter in a map), nats.js's
 * `js.publish` (the same publish and ack, each wrapped in a nats.js request), a JetStream fast batch (`allow_batched`: the server acks every
 * ACK_INTERVAL messages, no ack per event), and a core publish with the same `Nats-Msg-Id` header
 * that nothing acks (the floor of a message). Rounds interleave the four on one nats-server of the
 * run's own; each
 * prints the publisher's CPU per event, nats-server's, and events/s, and checks that the stream
 * stored every event, once. Knobs: BENCH_ROUNDS (5), BENCH_EVENTS (50,000 per way and round).
 */
import { setTimeout as sleep } from "node:timers/promises";
import { encodeText, publishEvent } from "@agentnet/bus";
import { type JetStreamManager, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { startFastIngest } from "@nats-io/jetstream/internal";
import { headers, type NatsConnection } from "@nats-io/transport-node";
import { runBench } from "./bench-script";
import { startBenchNats } from "./bus";
import { processTreeCpuMs } from "./process-cpu";
import { median } from "./proxy-load";
import { makeEvent } from "./telemetry-events";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 50_000);
const STREAM = "BENCH_EVENT_PUBLISH";
const SUBJECT = "bench.event-publish";
/** As many publishes awaiting their ack as the proxy's BufferedPublisher allows. */
const IN_FLIGHT = 256;
/** The fast batch's requested ack interval, in messages. */
const ACK_INTERVAL = 100;

type Publisher = (nc: NatsConnection, first: number) => Promise<void>;

/** How long the stream may take to hold what a way sent before the bench calls an event lost. */
const STORED_WITHIN_MS = 30_000;
const eventAt = (i: number) => makeEvent("acct_bench", i, EVENTS, Date.now());

/** Publishes events `first` on with `publishOne`, IN_FLIGHT of them awaiting their ack at once. */
async function inFlight(first: number, publishOne: (i: number) => Promise<unknown>): Promise<void> {
  let next = first;
  const end = first + EVENTS;
  const worker = async () => {
    while (next < end) await publishOne(next++);
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
}

const acked: Publisher = (nc, first) =>
  inFlight(first, (i) => publishEvent(nc, SUBJECT, eventAt(i), `e${i}`));

const fastBatch: Publisher = async (nc, first) => {
  const bodyOf = (i: number) => encodeText(JSON.stringify(eventAt(i)));
  const batch = await startFastIngest(nc, SUBJECT, bodyOf(first), {
    ackInterval: ACK_INTERVAL,
    allowGaps: false,
    msgID: `e${first}`,
  });
  // add() resolves at once while the ack window has room, so only a full window waits.
  const window: Promise<unknown>[] = [];
  for (let i = first + 1; i < first + EVENTS; i++) {
    window.push(batch.add(SUBJECT, bodyOf(i), { msgID: `e${i}` }));
    if (window.length === IN_FLIGHT) await Promise.all(window.splice(0));
  }
  await Promise.all(window);
  // What the proxy would do to learn that its latest events are stored (a request's lease waits
  // for that): ping until the server's cumulative ack reaches the last message.
  while ((await batch.ping()).ackSeq < EVENTS) await sleep(5);
  await batch.end();
};

const unacked: Publisher = async (nc, first) => {
  for (let i = first; i < first + EVENTS; i++) {
    const header = headers();
    header.set("Nats-Msg-Id", `e${i}`);
    nc.publish(SUBJECT, encodeText(JSON.stringify(eventAt(i))), { headers: header });
    if (i % IN_FLIGHT === 0) await nc.flush();
  }
  await nc.flush();
};

/** nats.js's own acked publish, each a request of its own: what `publishEvent` used before. */
const requestPerEvent: Publisher = (nc, first) => {
  const js = jetstream(nc);
  return inFlight(first, (i) =>
    js.publish(SUBJECT, encodeText(JSON.stringify(eventAt(i))), { msgID: `e${i}` }),
  );
};

const WAYS: [string, Publisher][] = [
  ["publishEvent (an ack per event)", acked],
  ["js.publish (an ack per event, a request each)", requestPerEvent],
  [`fast batch (an ack per ${ACK_INTERVAL})`, fastBatch],
  ["core publish (no ack)", unacked],
];

async function stored(jsm: JetStreamManager): Promise<number> {
  return (await jsm.streams.info(STREAM)).state.messages;
}

/** Waits until the stream holds `count` messages; throws with what it holds if it does not in time. */
async function storedAll(jsm: JetStreamManager, count: number, way: string): Promise<void> {
  for (const deadline = Date.now() + STORED_WITHIN_MS; ; await sleep(20)) {
    const held = await stored(jsm);
    if (held === count) return;
    if (held > count || Date.now() > deadline)
      throw new Error(`${way}: the stream stored ${held} of ${count} events`);
  }
}

async function main() {
  const bus = await startBenchNats();
  const nc = await bus.connectOperator("bench-event-publish");
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({
    name: STREAM,
    subjects: [SUBJECT],
    allow_batched: true,
    duplicate_window: 120_000_000_000,
  });
  const serverPid = bus.pids[0];
  if (serverPid === undefined) throw new Error("the bench's nats-server has no process id");
  const results = new Map<string, { publisherUs: number[]; serverUs: number[]; perSecond: number[] }>();
  let first = 0;
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      // Each round starts with another way: the server's work left over from one way (its writes
      // to disk) does not always fall on the same next one.
      const order = [...WAYS.slice(round % WAYS.length), ...WAYS.slice(0, round % WAYS.length)];
      for (const [name, publish] of order) {
        await jsm.streams.purge(STREAM);
        const cpu = process.cpuUsage();
        const server = processTreeCpuMs(serverPid);
        const started = performance.now();
        await publish(nc, first);
        // Ends once the stream holds every event (the core publish is not acked at all).
        await storedAll(jsm, EVENTS, name);
        const seconds = (performance.now() - started) / 1_000;
        const used = process.cpuUsage(cpu);
        const serverMs = processTreeCpuMs(serverPid) - server;
        first += EVENTS;
        const row = results.get(name) ?? { publisherUs: [], serverUs: [], perSecond: [] };
        row.publisherUs.push((used.user + used.system) / EVENTS);
        row.serverUs.push((serverMs * 1_000) / EVENTS);
        row.perSecond.push(EVENTS / seconds);
        results.set(name, row);
        console.log(
          `round ${round} ${name}: publisher ${row.publisherUs.at(-1)?.toFixed(1)} µs, nats-server ${row.serverUs.at(-1)?.toFixed(1)} µs per event, ${Math.round(row.perSecond.at(-1) ?? 0)} events/s`,
        );
      }
    }
  } finally {
    await nc.close();
    await bus.stop();
  }
  console.log(
    `\n${EVENTS} events per way and round, medians of ${ROUNDS} rounds\n\n| way | publisher CPU per event (µs) | nats-server CPU per event (µs) | events/s |\n|---|---|---|---|`,
  );
  for (const [name] of WAYS) {
    const row = results.get(name);
    if (!row) continue;
    console.log(
      `| ${name} | ${median(row.publisherUs).toFixed(1)} | ${median(row.serverUs).toFixed(1)} | ${Math.round(median(row.perSecond)).toLocaleString("en")} |`,
    );
  }
}

runBench(main);
