import { type FormEvent, useCallback, useState } from "react";
import type { ApiError } from "../api/client";
import { openApiError, openFieldError, openLocalErrors, type SubmitOutcome } from "../domain/form-errors";

/**
 * The field errors of one form, each cleared as soon as its field changes. Controls are named by
 * their field path (`Field`, `Check` and `MultiCheck` take a `name`), the form listens with
 * `onChange`, and every submit calls `submitted` with what its own check found, which brings all
 * errors back for the new attempt.
 */
export function useFieldErrors(api: ApiError | undefined) {
  const [local, setLocal] = useState<Readonly<Record<string, string>>>({});
  const [edited, setEdited] = useState<ReadonlySet<string>>(new Set());
  const outcome: SubmitOutcome = { local, api, edited };

  const edit = useCallback(
    (path: string) => setEdited((before) => (before.has(path) ? before : new Set(before).add(path))),
    [],
  );

  /** Starts a new attempt; true when the form's own check found nothing and it may be sent. */
  const submitted = (found: Record<string, string> = {}): boolean => {
    setLocal(found);
    setEdited(new Set());
    return Object.keys(found).length === 0;
  };

  const onChange = (event: FormEvent<HTMLFormElement>) => {
    const control = event.target;
    if (
      (control instanceof HTMLInputElement ||
        control instanceof HTMLSelectElement ||
        control instanceof HTMLTextAreaElement) &&
      control.name
    )
      edit(control.name);
  };

  const error = (path: string) => openFieldError(outcome, path);

  return {
    /** The open error at a field path. */
    error,
    /** Props naming a `Field`, `Check` or `MultiCheck` by its path, with its open error. */
    field: (path: string) => ({ name: path, error: error(path) }),
    /** The API's refusal while any field it named is unchanged (for `FormError`). */
    apiError: openApiError(outcome),
    /** The form's own findings still open (for `FormError`'s pointer to them). */
    invalid: openLocalErrors(outcome),
    /** For changes that are no control's change event (a model added to a list by a button). */
    edit,
    submitted,
    onChange,
  };
}
