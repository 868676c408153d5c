export * from "./env";
export * from "./health";
export * from "./http";
export * from "./ids";
export * from "./lifecycle";
export * from "./logger";
export * from "./run";
export * from "./tokens";
