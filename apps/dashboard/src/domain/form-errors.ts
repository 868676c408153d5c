import type { ApiError } from "../api/client";

/** The message for a field: the form's own check first, then what the API said about it. */
const fieldError = (
  local: Readonly<Record<string, string>>,
  api: ApiError | undefined,
  path: string,
): string | undefined => local[path] ?? api?.fieldMessage(path);

/**
 * What a form knows about its last submit: the problems its own check found (`local`, by field
 * path), the API's refusal, and the fields changed since (`edited`, by the controls' names).
 */
export interface SubmitOutcome {
  local: Readonly<Record<string, string>>;
  api: ApiError | undefined;
  edited: ReadonlySet<string>;
}

/**
 * Whether a change to the control named `edited` answers the error at `path`: the field itself,
 * a part of it ("limits.token_limit.user_cap" answers "limits"), or what holds it.
 */
export const answers = (edited: string, path: string): boolean =>
  edited === path || edited.startsWith(`${path}.`) || path.startsWith(`${edited}.`);

const changedSince = (outcome: SubmitOutcome, path: string): boolean =>
  [...outcome.edited].some((edited) => answers(edited, path));

/** A field's error until the user changes that field: a fixed field stops saying it is wrong. */
export const openFieldError = (outcome: SubmitOutcome, path: string): string | undefined =>
  changedSince(outcome, path) ? undefined : fieldError(outcome.local, outcome.api, path);

/** The form's own findings on fields not changed since. */
export const openLocalErrors = (outcome: SubmitOutcome): Record<string, string> =>
  Object.fromEntries(Object.entries(outcome.local).filter(([path]) => !changedSince(outcome, path)));

// Some services nest the body under "body." in their paths (as ApiError.fieldMessage allows for).
const detailPath = (path: string) => path.replace(/^body\./, "");

/**
 * The API's refusal as the form's alert, until every field it named has been changed: then the
 * alert would only repeat what the user already fixed. A refusal naming no field stays.
 */
export const openApiError = (outcome: SubmitOutcome): ApiError | undefined => {
  const { api } = outcome;
  if (!api || api.details.length === 0) return api;
  return api.details.every((detail) => changedSince(outcome, detailPath(detail.path))) ? undefined : api;
};
