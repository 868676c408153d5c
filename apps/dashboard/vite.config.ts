import { defineConfig } from "vite";

// No @vitejs/plugin-react: the built-in oxc transform compiles JSX with the automatic runtime,
// and the dashboard does not need fast refresh. Relative base so the files work under any mount.
export default defineConfig({
  root: import.meta.dirname,
  base: "./",
  oxc: { jsx: { runtime: "automatic" } },
  build: { outDir: "dist", emptyOutDir: true, sourcemap: false, target: "es2022" },
});
