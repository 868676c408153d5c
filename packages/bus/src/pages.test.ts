import { AppError, PAGES_VERSION_GONE, type PageRequest, type TextPage } from "@agentnet/contracts";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { assemblePages, PageBook, splitText } from "./pages";

const escapedBytes = (slice: string) => Buffer.byteLength(JSON.stringify(slice));

describe("splitText", () => {
  it("cuts a text into slices that each fit the budget as JSON escapes them, and joins back to it", () => {
    const text = JSON.stringify({
      quotes: '"\\"'.repeat(300),
      controls: "\u0001\n\t".repeat(200),
      accents: "é€".repeat(300),
      emoji: "🦜".repeat(300),
      lone: "\ud800x".repeat(50),
    });
    const slices = splitText(text, 256);
    expect(slices.join("")).toBe(text);
    expect(slices.length).toBeGreaterThan(10);
    for (const slice of slices) expect(escapedBytes(slice)).toBeLessThanOrEqual(256);
    // A surrogate pair is never cut: no slice ends in a high surrogate that the next one completes.
    for (const slice of slices.slice(0, -1)) expect(/[\ud800-\udbff]$/.test(slice)).toBe(false);
  });

  it("keeps a text that fits in one slice, and the empty text as one empty slice", () => {
    expect(splitText("abc", 100)).toEqual(["abc"]);
    expect(splitText("", 100)).toEqual([""]);
  });
});

/** A book over a source whose text the test sets, counting its renderings. */
const bookOver = (options: { freshMs?: number; failureMs?: number; pageBytes?: number } = {}) => {
  let clock = 0;
  let text = JSON.stringify({ rows: "x".repeat(1_000) });
  let failing: Error | undefined;
  let renders = 0;
  const book = new PageBook({
    pageBytes: () => options.pageBytes ?? 300,
    freshMs: options.freshMs ?? 30_000,
    failureMs: options.failureMs ?? 5_000,
    now: () => clock,
  });
  const render = async () => {
    renders++;
    if (failing) throw failing;
    return text;
  };
  return {
    book,
    page: (request: Partial<PageRequest>) => book.page("acc", { page: 0, ...request }, render),
    read: () => assemblePages((request) => book.page("acc", request, render), z.object({ rows: z.string() })),
    setText: (next: string) => {
      text = next;
    },
    setFailing: (error: Error | undefined) => {
      failing = error;
    },
    advance: (ms: number) => {
      clock += ms;
    },
    renders: () => renders,
  };
};

describe("PageBook", () => {
  it("renders once for many readers of every page while the rendering is fresh", async () => {
    const source = bookOver();
    const readings = await Promise.all(Array.from({ length: 20 }, () => source.read()));
    for (const reading of readings) expect(reading.rows).toHaveLength(1_000);
    expect(source.renders()).toBe(1);
  });

  it("renders again on a first page past freshMs or after an invalidation", async () => {
    const source = bookOver({ freshMs: 1_000 });
    await source.read();
    source.advance(1_001);
    await source.read();
    expect(source.renders()).toBe(2);
    source.book.invalidate("acc");
    await source.read();
    expect(source.renders()).toBe(3);
  });

  it("serves the later pages of the version a reader started on after an invalidation", async () => {
    const source = bookOver();
    const first = await source.page({});
    source.book.invalidate("acc");
    source.setText(JSON.stringify({ rows: "y".repeat(1_000) }));
    const second = await source.page({ page: 1, version: first.version });
    expect(second.version).toBe(first.version);
    expect(source.renders()).toBe(1);
  });

  it("renders equal data into the same version on another replica, and refuses a version it cannot render", async () => {
    const one = bookOver();
    const other = bookOver();
    const first = await one.page({});
    const second = await other.page({ page: 1, version: first.version });
    expect(second.version).toBe(first.version);

    const changed = bookOver();
    changed.setText(JSON.stringify({ rows: "z".repeat(1_000) }));
    await expect(changed.page({ page: 2, version: first.version })).rejects.toMatchObject({
      status: 409,
      code: PAGES_VERSION_GONE,
    });
  });

  it("a reader whose version was rendered over part-way starts over and gets the whole new text", async () => {
    const source = bookOver();
    let fetched = 0;
    const reading = await assemblePages(
      async (request) => {
        if (++fetched === 2) {
          // Between its first and second page the data changes and another reader renders it.
          source.setText(JSON.stringify({ rows: "n".repeat(1_000) }));
          source.book.invalidate("acc");
          await source.page({});
        }
        return source.page(request);
      },
      z.object({ rows: z.string() }),
    );
    expect(reading.rows).toBe("n".repeat(1_000));
  });

  it("keeps renderings of other keys no longer than keepMs", async () => {
    const source = bookOver({ freshMs: 1_000 });
    const first = await source.page({});
    source.advance(30_001);
    await source.book.page("other", { page: 0 }, async () => "[]");
    await source.page({ page: 1, version: first.version });
    expect(source.renders()).toBe(2);
  });

  it("answers a failed rendering as it failed for failureMs without rendering again, then renders", async () => {
    const source = bookOver({ failureMs: 5_000 });
    source.setFailing(new AppError(503, "store.unavailable", "down"));
    for (let i = 0; i < 20; i++)
      await expect(source.page({})).rejects.toMatchObject({ code: "store.unavailable" });
    expect(source.renders()).toBe(1);
    source.setFailing(undefined);
    source.advance(5_000);
    await source.read();
    expect(source.renders()).toBe(2);
  });

  it("forgets a failure when the key is invalidated", async () => {
    const source = bookOver();
    source.setFailing(new Error("broken"));
    await expect(source.page({})).rejects.toThrow("broken");
    source.setFailing(undefined);
    source.book.invalidate("acc");
    await expect(source.read()).resolves.toMatchObject({ rows: expect.any(String) });
  });

  it("does not keep a rendering that started before an invalidation", async () => {
    const source = bookOver();
    const before = source.page({});
    source.book.invalidate("acc");
    await before;
    await source.page({});
    expect(source.renders()).toBe(2);
  });
});

describe("assemblePages", () => {
  it("gives up with 503 pages.unsettled when the reply keeps changing", async () => {
    let version = 0;
    const fetchPage = async (request: { page: number; version?: string }): Promise<TextPage> => {
      if (request.version === undefined) version++;
      return { version: `v${version}-${request.page}`, page: request.page, pages: 2, text: "[" };
    };
    await expect(assemblePages(fetchPage, z.array(z.string()))).rejects.toMatchObject({
      status: 503,
      code: "pages.unsettled",
    });
  });
});
