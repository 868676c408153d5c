export * from "./counters";
export * from "./lease-table";
export * from "./limits";
export * from "./windows";
