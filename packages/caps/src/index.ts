export * from "./amount";
export * from "./counter-book";
export * from "./counters";
export * from "./lease-grant";
export * from "./lease-table";
export * from "./limits";
export * from "./settlement";
export * from "./windows";
