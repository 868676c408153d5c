import "vitest";

/** What the global setup hands to every test through `inject`. */
declare module "vitest" {
  export interface ProvidedContext {
    natsUrl: string;
    mongoUrl: string;
  }
}
