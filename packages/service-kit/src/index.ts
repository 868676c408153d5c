export * from "./env";
export * from "./health";
export * from "./lifecycle";
export * from "./logger";
export * from "./ids";
