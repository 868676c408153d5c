import { createLogger } from "@agentnet/service-kit";
import { describe, expect, it, vi } from "vitest";
import { OTHER_OPEN_FILES, openFilesNeeded, parseOpenFileLimit, reportOpenFileLimit } from "./open-files";

const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max open files            20000                20000                files
Max locked memory         8388608              8388608              bytes
`;

/** A silent logger whose info and warn calls are kept. */
function keptLines() {
  const logger = createLogger("open-files-test", "silent");
  return { logger, info: vi.spyOn(logger, "info"), warn: vi.spyOn(logger, "warn") };
}

describe("the open file limit", () => {
  it("is read from /proc/self/limits, unlimited as undefined", () => {
    expect(parseOpenFileLimit(LIMITS)).toEqual({ soft: 20_000, hard: 20_000 });
    expect(
      parseOpenFileLimit("Max open files            1024                 unlimited            files\n"),
    ).toEqual({ soft: 1024, hard: undefined });
    expect(parseOpenFileLimit("Max cpu time unlimited unlimited seconds\n")).toBeUndefined();
  });

  it("must hold one origin's connections, every client connection and the rest", () => {
    expect(openFilesNeeded(4096, 4096)).toBe(8192 + OTHER_OPEN_FILES);
  });

  it("is logged beside the bounds, and a warning says when they do not fit", () => {
    const fits = keptLines();
    reportOpenFileLimit(fits.logger, 4096, 4096, () => LIMITS);
    expect(fits.warn).not.toHaveBeenCalled();
    expect(fits.info).toHaveBeenCalledWith(
      expect.objectContaining({ open_files_soft: 20_000, upstream_connections_per_origin: 4096 }),
      "open file limit",
    );
    const short = keptLines();
    reportOpenFileLimit(short.logger, 16_384, 4096, () => LIMITS);
    expect(short.info).not.toHaveBeenCalled();
    expect(short.warn).toHaveBeenCalledWith(
      expect.objectContaining({ open_files_needed: 16_384 + 4096 + OTHER_OPEN_FILES }),
      expect.stringContaining("open file limit is below"),
    );
  });
});
