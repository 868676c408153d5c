// Bundles one app (run from its folder) into dist/main.js for production: workspace packages are
// inlined (they ship TypeScript), npm dependencies stay external and load from node_modules.
import { readFileSync } from "node:fs";
import { build } from "esbuild";

const manifest = JSON.parse(readFileSync("package.json", "utf8"));
const external = Object.keys(manifest.dependencies ?? {}).filter((name) => !name.startsWith("@agentnet/"));

await build({
  entryPoints: ["src/main.ts"],
  outfile: "dist/main.js",
  bundle: true,
  platform: "node",
  target: "node20",
  format: "esm",
  sourcemap: true,
  external: [...external, ...external.map((name) => `${name}/*`)],
  // CommonJS code inlined into ESM needs a `require`. The import is aliased because the banner is
  // raw text esbuild does not rename: an inlined module importing `createRequire` would collide.
  banner: {
    js: "import { createRequire as bundleCreateRequire } from 'node:module'; const require = bundleCreateRequire(import.meta.url);",
  },
  logLevel: "warning",
});
