import { describe, expect, it } from "vitest";
import { ApiError } from "../api/client";
import { answers, openApiError, openFieldError, openLocalErrors } from "./form-errors";

const refusal = new ApiError(
  400,
  {
    message: "invalid request: name: too short; body.limits.token_limit.user_cap: must be >= 0",
    details: [
      { path: "name", message: "too short" },
      { path: "body.limits.token_limit.user_cap", message: "must be >= 0" },
    ],
  },
  "refused",
);

describe("answers", () => {
  it("matches the field itself, a part of it, or what holds it, never a sibling", () => {
    expect(answers("name", "name")).toBe(true);
    expect(answers("limits.token_limit.user_cap", "limits")).toBe(true);
    expect(answers("models", "models.0.id")).toBe(true);
    expect(answers("limits.token_limit.user_cap", "limits.token_limit.group_cap")).toBe(false);
    expect(answers("name", "names")).toBe(false);
  });
});

describe("open errors after a submit", () => {
  it("shows a field's error, the form's own first, until that field changes", () => {
    const local = { name: "enter a name" };
    expect(openFieldError({ local, api: refusal, edited: new Set() }, "name")).toBe("enter a name");
    expect(openFieldError({ local: {}, api: refusal, edited: new Set() }, "name")).toBe("too short");
    expect(openFieldError({ local, api: refusal, edited: new Set(["name"]) }, "name")).toBeUndefined();
    expect(
      openFieldError({ local: {}, api: refusal, edited: new Set(["name"]) }, "limits.token_limit.user_cap"),
    ).toBe("must be >= 0");
  });

  it("keeps pointing at the form's own findings only while their fields are unchanged", () => {
    const local = {
      name: "enter a name",
      "limits.token_limit.window_seconds": "must be at least 60 seconds",
    };
    expect(
      Object.keys(
        openLocalErrors({ local, api: undefined, edited: new Set(["limits.token_limit.window_seconds"]) }),
      ),
    ).toEqual(["name"]);
  });

  it("drops the API's alert once every field it named changed, and keeps one naming no field", () => {
    const outcome = { local: {}, api: refusal };
    expect(openApiError({ ...outcome, edited: new Set(["name"]) })).toBe(refusal);
    expect(
      openApiError({ ...outcome, edited: new Set(["name", "limits.token_limit.user_cap"]) }),
    ).toBeUndefined();
    const conflict = new ApiError(409, { message: "settings exist" }, "refused");
    expect(openApiError({ local: {}, api: conflict, edited: new Set(["name"]) })).toBe(conflict);
  });
});
