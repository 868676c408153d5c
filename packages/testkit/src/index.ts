export * from "./containers";
export * from "./fixtures";
export * from "./isolated-nats";
