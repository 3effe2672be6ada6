// Validate an AsyncAPI document with the AsyncAPI parser: node scripts/validate-asyncapi.mjs FILE
// Prints every diagnostic as JSON lines, then a summary; exits 1 on any error (severity 0).
import { readFile } from "node:fs/promises";
import { Parser } from "@asyncapi/parser";

const [file] = process.argv.slice(2);
const text = await readFile(file, "utf8");
const parser = new Parser();
const { document, diagnostics } = await parser.parse(text);
for (const d of diagnostics) {
  console.log(JSON.stringify({ severity: d.severity, code: d.code, message: d.message, path: d.path }));
}
const errors = diagnostics.filter((d) => d.severity === 0);
if (document === undefined || errors.length > 0) {
  console.log(`invalid: ${errors.length} errors`);
  process.exit(1);
}
const channels = document.channels().all().map((c) => c.address());
const messages = document.allMessages().all().length;
console.log(JSON.stringify({ valid: true, version: document.version(), channels, messages }));
