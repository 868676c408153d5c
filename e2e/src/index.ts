export * from "./setup";
export * from "./stack";
export * from "./upstream";
