// Compiles src/ twice: ES modules (dist/esm) and CommonJS (dist/cjs), each with its .d.ts files.
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";

const tsc = ["node_modules/typescript/bin/tsc", "-p", "tsconfig.json"];
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
