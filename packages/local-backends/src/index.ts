export * from "./backends";
export * from "./compose";
export * from "./mongo-auth";
export * from "./nats-auth";
export * from "./ports";
export * from "./probe";
export * from "./process";
export * from "./root";
