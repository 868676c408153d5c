export * from "./anthropic-messages";
export * from "./containers";
export * from "./events";
export * from "./fixtures";
export * from "./isolated-nats";
export * from "./nats-cluster";
export * from "./oauth-servers";
