import { z } from "zod";

/**
 * Replies that can outgrow one NATS message (max_payload, 1 MiB by default): an account's gateway
 * snapshot, its provider list. The server renders the reply's JSON once per version and answers it
 * in slices of text that each fit a message; the caller asks for them in turn and joins them.
 */

/** Slices one paged reply may take at most: bounds a reader's loop whatever the server says. */
export const MAX_PAGES = 1_000;

/** Which slice to send. `version` (from the first slice's reply) pins the rest to the same rendering. */
export const PageRequest = z.object({
  page: z
    .number()
    .int()
    .min(0)
    .max(MAX_PAGES - 1)
    .default(0),
  version: z.string().min(1).max(128).optional(),
});
export type PageRequest = z.infer<typeof PageRequest>;

/** One slice of a reply's JSON text; the slices of one version, joined in order, are the reply. */
export const TextPage = z.object({
  /** Names the rendering (a hash of its text): equal texts have equal versions on every replica. */
  version: z.string().min(1).max(128),
  page: z.number().int().min(0),
  pages: z.number().int().min(1).max(MAX_PAGES),
  text: z.string(),
});
export type TextPage = z.infer<typeof TextPage>;

/** A later slice asked for a version the server no longer renders: the caller starts over. */
export const PAGES_VERSION_GONE = "pages.version_gone";
