// Compiles src/ twice: ES modules (dist/esm) and CommonJS (dist/cjs), each with its .d.ts files.
// npm runs it as `prepare` too: on `npm ci` / `npm install` here, before `npm pack`, and on a git install.
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";

let compiler;
try {
  compiler = createRequire(import.meta.url).resolve("typescript/bin/tsc");
} catch {
  console.error("The build needs the devDependencies: run `npm ci` in clients/node first (it builds as well).");
  process.exit(1);
}
const tsc = [compiler, "-p", "tsconfig.json"];
rmSync("dist", { recursive: true, force: true });
execFileSync(process.execPath, tsc, { stdio: "inherit" });
execFileSync(
  process.execPath,
  [...tsc, "--module", "CommonJS", "--moduleResolution", "Node10", "--outDir", "dist/cjs"],
  { stdio: "inherit" },
);
mkdirSync("dist/cjs", { recursive: true });
// The package is "type": "module": this marks dist/cjs as CommonJS for Node.
writeFileSync("dist/cjs/package.json", JSON.stringify({ type: "commonjs" }) + "\n");
