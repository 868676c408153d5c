export type { Msg, NatsConnection, Subscription } from "@nats-io/transport-node";
export * from "./account-deletions";
export * from "./caller-revocations";
export * from "./connect";
export * from "./jetstream";
export * from "./json";
export * from "./leadership";
export * from "./payload";
export * from "./rpc";
