import type { Paginated } from "@agentnet/contracts";

/** Row offset of a 1-indexed page. */
export const pageOffset = (page: number, pageSize: number): number => (page - 1) * pageSize;

/** The list envelope; a page past the end is an empty page, not an error. */
export function toPage<T>(data: T[], page: number, pageSize: number, totalRecords: number): Paginated<T> {
  return {
    data,
    page,
    page_size: pageSize,
    total_records: totalRecords,
    total_pages: Math.ceil(totalRecords / pageSize),
  };
}
