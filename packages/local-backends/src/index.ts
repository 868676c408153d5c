export * from "./backends";
export * from "./ports";
export * from "./probe";
export * from "./process";
export * from "./root";
