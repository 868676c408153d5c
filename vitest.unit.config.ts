import { configDefaults, defineConfig } from "vitest/config";
import { TESTS_NEXT_TO_CODE, TIMEOUTS } from "./vitest.shared.ts";

// The unit tier (`pnpm test:unit`): every *.test.ts under apps/ and packages/ but the *.int.test.ts.
// No global setup, so no backend starts: a test that reaches for one fails, and belongs in *.int.test.ts.
export default defineConfig({
  test: {
    name: "unit",
    include: TESTS_NEXT_TO_CODE,
    exclude: [...configDefaults.exclude, "**/*.int.test.ts"],
    ...TIMEOUTS,
  },
});
