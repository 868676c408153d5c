import type { ApiError } from "../api/client";

/** The message for a field: the form's own check first, then what the API said about it. */
export const fieldError = (
  local: Readonly<Record<string, string>>,
  api: ApiError | undefined,
  path: string,
): string | undefined => local[path] ?? api?.fieldMessage(path);
