import "vitest";

/** What the global setup hands to every test through `inject`. */
declare module "vitest" {
  export interface ProvidedContext {
    mongoUrl: string;
    /** A directory of this test run: per-file servers keep their data and pid files here. */
    runDir: string;
  }
}
