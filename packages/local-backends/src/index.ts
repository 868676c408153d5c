export * from "./backends";
export * from "./probe";
export * from "./process";
export * from "./root";
