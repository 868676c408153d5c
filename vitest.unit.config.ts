import { configDefaults, defineConfig } from "vitest/config";
import { TESTS_NEXT_TO_CODE, TIMEOUTS } from "./vitest.shared.ts";

// The unit tier (`pnpm test:unit`): every *.test.ts under apps/ and packages/ but the *.int.test.ts.
// No global setup, so no backend starts: a test that reaches for one fails, and belongs in *.int.test.ts.
// Unit tests share no state (no module mocks, fake timers or stubbed globals), so the files a worker
// runs share one module graph (`isolate: false`): 8 s instead of 38 s on 2 cores, most of it imports.
export default defineConfig({
  test: {
    name: "unit",
    include: TESTS_NEXT_TO_CODE,
    exclude: [...configDefaults.exclude, "**/*.int.test.ts"],
    isolate: false,
    ...TIMEOUTS,
  },
});
