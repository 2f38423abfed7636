// The package as a partner installs it: ES module and CommonJS entry points, both typed, one runtime dependency.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { test } from "node:test";

import * as esm from "@ageverify/client";

const require = createRequire(import.meta.url);

test("import and require give the same API, each with its declarations", () => {
  const cjs = require("@ageverify/client");
  assert.deepEqual(Object.keys(cjs).sort(), Object.keys(esm).sort());
  for (const name of ["AgeVerify", "WebhookVerifier", "ApiError", "BadRequestError", "ConflictError"]) {
    assert.equal(typeof esm[name], "function", name);
  }
  const manifest = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
  for (const target of Object.values(manifest.exports["."])) assert.ok(existsSync(new URL(`../${target.types}`, import.meta.url)));
});

test("standardwebhooks is the only runtime dependency", () => {
  const manifest = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
  assert.deepEqual(Object.keys(manifest.dependencies), ["standardwebhooks"]);
});
