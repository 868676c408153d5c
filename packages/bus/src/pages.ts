import { createHash } from "node:crypto";
import {
  AppError,
  MAX_PAGES,
  PAGES_VERSION_GONE,
  type PagedEndpoint,
  type PageRequest,
  type RequestOf,
  type TextPage,
} from "@agentnet/contracts";
import type { NatsConnection } from "@nats-io/transport-node";
import type { z } from "zod";
import { maxPayloadOf } from "./payload";
import { request } from "./rpc";

/** Room a page's reply envelope takes beside its text (`{"ok":true,"data":{"version":…}}`). */
const PAGE_ENVELOPE_BYTES = 1_024;

/** The most text bytes, as JSON escapes them, one page may carry on this connection. */
export const pageBytesOf = (nc: NatsConnection): number => maxPayloadOf(nc) - PAGE_ENVELOPE_BYTES;

/** Bytes `JSON.stringify` writes for the UTF-16 code unit at `index` (and the one after, for a pair). */
function escapedCost(text: string, index: number): { bytes: number; units: number } {
  const unit = text.charCodeAt(index);
  if (unit === 0x22 || unit === 0x5c) return { bytes: 2, units: 1 };
  if (unit < 0x20) return { bytes: "\b\f\n\r\t".includes(text[index] ?? "") ? 2 : 6, units: 1 };
  if (unit < 0x80) return { bytes: 1, units: 1 };
  if (unit < 0x800) return { bytes: 2, units: 1 };
  if (unit >= 0xd800 && unit <= 0xdbff) {
    const next = text.charCodeAt(index + 1);
    if (next >= 0xdc00 && next <= 0xdfff) return { bytes: 4, units: 2 };
    return { bytes: 6, units: 1 };
  }
  if (unit >= 0xdc00 && unit <= 0xdfff) return { bytes: 6, units: 1 };
  return { bytes: 3, units: 1 };
}

/**
 * Cuts `text` into slices whose JSON string form (quotes and escapes included, in UTF-8) takes at
 * most `maxBytes` each, never between the two halves of a surrogate pair. Joined, they are `text`.
 */
export function splitText(text: string, maxBytes: number): string[] {
  const budget = maxBytes - 2;
  if (budget < 6) throw new RangeError(`a page of ${maxBytes} bytes cannot hold a character`);
  const slices: string[] = [];
  let start = 0;
  let used = 0;
  let index = 0;
  while (index < text.length) {
    const { bytes, units } = escapedCost(text, index);
    if (used + bytes > budget) {
      slices.push(text.slice(start, index));
      start = index;
      used = 0;
    }
    used += bytes;
    index += units;
  }
  slices.push(text.slice(start));
  return slices;
}

/** One rendering of a paged reply: its text in slices, and what names it. */
export interface Rendering {
  version: string;
  pages: string[];
  /** UTF-8 bytes of the whole text. */
  bytes: number;
  renderedAt: number;
}

/** Renders `text` in slices of at most `pageBytes`; its version is a hash of the text. */
function renderPages(text: string, pageBytes: number, renderedAt: number): Rendering {
  const pages = splitText(text, pageBytes);
  if (pages.length > MAX_PAGES) {
    throw new AppError(
      413,
      "payload_too_large",
      `the reply takes ${pages.length} pages; at most ${MAX_PAGES}`,
    );
  }
  return {
    version: createHash("sha256").update(text).digest("hex").slice(0, 32),
    pages,
    bytes: Buffer.byteLength(text),
    renderedAt,
  };
}

type Entry = { rendering?: Rendering; failure?: { error: unknown; at: number }; stale: boolean };

export interface PageBookOptions {
  /** The most text bytes a page may carry (`pageBytesOf(nc)`). */
  pageBytes: () => number;
  /** A first page within this long of its rendering is served from it; 0 renders on every first page. */
  freshMs: number;
  /** A failed rendering is answered again, without rendering, for this long. */
  failureMs: number;
  /**
   * How long a rendering is kept for the later pages of readings under way, and at most how many
   * (the oldest go first): renderings of large replies must not pile up in memory.
   */
  keepMs?: number;
  maxEntries?: number;
  now?: () => number;
}

/**
 * A server's paged replies by key (an account): each rendered once and answered page by page.
 * A first page (no version) is served from the last rendering while it is fresh and not
 * invalidated; a later page names its version and is served from the rendering of that version,
 * rendered again when this replica holds another (a replica renders equal data into equal pages),
 * else 409 `pages.version_gone` and the caller starts over. Concurrent renderings of one key share
 * one, a rendering that started before an invalidation is not kept, and a failed rendering is
 * answered as it failed for `failureMs`, so callers retrying it cost no work.
 */
export class PageBook {
  private readonly entries = new Map<string, Entry>();
  private readonly rendering = new Map<string, Promise<Rendering>>();
  private readonly generations = new Map<string, number>();
  private readonly now: () => number;
  /** Renderings done (failed ones too) and the time they took, for metrics and tests. */
  readonly stats = { renderings: 0, renderMs: 0 };

  constructor(private readonly options: PageBookOptions) {
    this.now = options.now ?? Date.now;
  }

  async page(key: string, request: PageRequest, render: () => Promise<string>): Promise<TextPage> {
    const entry = this.entries.get(key);
    let rendering: Rendering;
    if (request.version === undefined) rendering = await this.current(key, render);
    else if (entry?.rendering?.version === request.version) rendering = entry.rendering;
    else rendering = await this.renderShared(key, render);
    if (request.version !== undefined && rendering.version !== request.version) {
      throw new AppError(
        409,
        PAGES_VERSION_GONE,
        `version ${request.version} is no longer served; start over`,
      );
    }
    const text = rendering.pages[request.page];
    if (text === undefined) {
      throw new AppError(
        404,
        "not_found",
        `page ${request.page} not found (${rendering.pages.length} pages)`,
      );
    }
    return { version: rendering.version, page: request.page, pages: rendering.pages.length, text };
  }

  /** The key's rendering: the last one while fresh and not invalidated, else a new one. */
  current(key: string, render: () => Promise<string>): Promise<Rendering> {
    const entry = this.entries.get(key);
    const now = this.now();
    if (entry?.failure && now - entry.failure.at < this.options.failureMs) {
      return Promise.reject(entry.failure.error);
    }
    if (entry?.rendering && !entry.stale && now - entry.rendering.renderedAt < this.options.freshMs) {
      return Promise.resolve(entry.rendering);
    }
    return this.renderShared(key, render);
  }

  invalidate(key: string): void {
    const entry = this.entries.get(key);
    if (entry) {
      entry.stale = true;
      entry.failure = undefined;
    }
    this.rendering.delete(key);
    this.generations.set(key, (this.generations.get(key) ?? 0) + 1);
  }

  invalidateAll(): void {
    for (const key of [...this.entries.keys(), ...this.rendering.keys()]) this.invalidate(key);
  }

  private renderShared(key: string, render: () => Promise<string>): Promise<Rendering> {
    const running = this.rendering.get(key);
    if (running) return running;
    const generation = this.generations.get(key) ?? 0;
    const kept = () => (this.generations.get(key) ?? 0) === generation;
    const started = performance.now();
    this.stats.renderings++;
    const promise = render()
      .then((text) => renderPages(text, this.options.pageBytes(), this.now()))
      .finally(() => {
        this.stats.renderMs += performance.now() - started;
      })
      .then(
        (rendering) => {
          if (kept()) this.keep(key, { rendering, stale: false });
          return rendering;
        },
        (error: unknown) => {
          if (kept()) this.keep(key, { failure: { error, at: this.now() }, stale: false });
          throw error;
        },
      )
      .finally(() => {
        if (this.rendering.get(key) === promise) this.rendering.delete(key);
      });
    this.rendering.set(key, promise);
    return promise;
  }

  private keep(key: string, entry: Entry) {
    const previous = this.entries.get(key);
    // A failure keeps the last rendering, so its pages still serve callers part-way through it.
    const next = entry.failure && previous?.rendering ? { ...entry, rendering: previous.rendering } : entry;
    this.entries.delete(key);
    this.entries.set(key, next);
    const max = this.options.maxEntries ?? 1_000;
    const keepMs = Math.max(this.options.keepMs ?? 30_000, this.options.freshMs, this.options.failureMs);
    // Kept in the order rendered, so the oldest come first.
    for (const [oldKey, oldEntry] of this.entries) {
      const at = oldEntry.failure?.at ?? oldEntry.rendering?.renderedAt ?? 0;
      if (this.entries.size <= max && this.now() - at <= keepMs) break;
      this.entries.delete(oldKey);
    }
  }
}

/** How often a caller starts over when the reply changed while it read the pages. */
const ASSEMBLY_ATTEMPTS = 3;

/**
 * Reads a paged reply: the first page, then the others pinned to its version, joined and checked
 * against `value`. A reply that changed in between (another version, `pages.version_gone`) is read
 * again from the start, a few times at most.
 */
export async function assemblePages<V extends z.ZodType>(
  fetchPage: (request: { page: number; version?: string }) => Promise<TextPage>,
  value: V,
): Promise<z.output<V>> {
  for (let attempt = 1; ; attempt++) {
    const first = await fetchPage({ page: 0 });
    const texts = [first.text];
    try {
      for (let page = 1; page < first.pages; page++) {
        const next = await fetchPage({ page, version: first.version });
        if (next.version !== first.version || next.pages !== first.pages) throw versionGone();
        texts.push(next.text);
      }
    } catch (error) {
      const gone = error instanceof AppError && error.code === PAGES_VERSION_GONE;
      if (gone && attempt < ASSEMBLY_ATTEMPTS) continue;
      if (gone)
        throw new AppError(503, "pages.unsettled", "the reply kept changing while it was read; try again");
      throw error;
    }
    return value.parse(JSON.parse(texts.join("")));
  }
}

const versionGone = () => new AppError(409, PAGES_VERSION_GONE, "the reply changed while it was read");

/** Calls a paged endpoint and returns its whole reply, parsed (see `assemblePages`). */
export function requestPaged<E extends PagedEndpoint>(
  nc: NatsConnection,
  endpoint: E,
  payload: Omit<RequestOf<E>, keyof PageRequest>,
  options: { timeoutMs?: number } = {},
): Promise<z.output<E["value"]>> {
  return assemblePages<E["value"]>(
    (page) => request(nc, endpoint, { ...payload, ...page } as RequestOf<E>, options),
    endpoint.value,
  );
}

/**
 * A book whose pages fit `nc`'s messages. By default every first page renders anew and a failure
 * is not kept: what a list endpoint wants; a snapshot keeps its renderings and failures a while.
 */
export const pageBookOn = (
  nc: NatsConnection,
  keep: Partial<Pick<PageBookOptions, "freshMs" | "failureMs">> = {},
): PageBook =>
  new PageBook({
    pageBytes: () => pageBytesOf(nc),
    freshMs: keep.freshMs ?? 0,
    failureMs: keep.failureMs ?? 0,
  });
