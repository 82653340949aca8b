// node validate.mjs FILE: validates FILE as an OpenAPI 3.1 document with
// @seriousme/openapi-schema-validator (pinned by package-lock.json; `make test-deps` installs
// it) and resolves every internal $ref. Prints "valid: FILE" and exits 0, or prints each error
// and exits 1.
import { readFileSync } from "node:fs";

let Validator;
try {
  ({ Validator } = await import("@seriousme/openapi-schema-validator"));
} catch (e) {
  console.error("tests/openapi: the validator is not installed; run `make test-deps` (" + e.message + ")");
  process.exit(1);
}

const file = process.argv[2];
if (!file) {
  console.error("usage: node validate.mjs FILE");
  process.exit(2);
}
const document = JSON.parse(readFileSync(file, "utf8"));
const validator = new Validator();
const result = await validator.validate(document);
if (!result.valid) {
  console.error("invalid OpenAPI document " + file + ":");
  console.error(JSON.stringify(result.errors, null, 2));
  process.exit(1);
}
if (validator.version !== "3.1") {
  console.error("invalid: " + file + " is OpenAPI " + validator.version + ", expected 3.1");
  process.exit(1);
}
try {
  validator.resolveRefs();
} catch (e) {
  console.error("invalid: a $ref of " + file + " does not resolve: " + e.message);
  process.exit(1);
}
console.log("valid: " + file + " (OpenAPI " + validator.version + ", " +
            Object.keys(document.paths).length + " paths)");
