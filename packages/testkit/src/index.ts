export * from "./containers";
export * from "./fixtures";
