// Validate AsyncAPI documents with the AsyncAPI parser: node scripts/validate-asyncapi.mjs FILE...
// Prints one JSON line a file (its errors, or its channels and messages); exits 1 when any file
// has an error (a diagnostic of severity 0).
import { readFile } from "node:fs/promises";
import { Parser } from "@asyncapi/parser";

const parser = new Parser();
let failed = false;
for (const file of process.argv.slice(2)) {
  const { document, diagnostics } = await parser.parse(await readFile(file, "utf8"));
  const errors = diagnostics
    .filter((d) => d.severity === 0)
    .map((d) => ({ code: d.code, message: d.message, path: d.path }));
  if (document === undefined || errors.length > 0) {
    failed = true;
    console.log(JSON.stringify({ file, valid: false, errors }));
    continue;
  }
  const channels = document.channels().all().map((c) => c.address());
  const messages = document.allMessages().all().length;
  console.log(JSON.stringify({ file, valid: true, version: document.version(), channels, messages }));
}
process.exit(failed ? 1 : 0);
