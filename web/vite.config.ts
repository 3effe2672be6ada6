import { defineConfig } from "vite";

// The SDK (clients/typescript) from its sources, as tsconfig.json's `paths` says.
const SDK = decodeURIComponent(new URL("../clients/typescript/src/index.ts", import.meta.url).pathname);
// Its generated types (one copy, the SDK's) for the enums' value lists too.
const GENERATED = decodeURIComponent(new URL("../clients/typescript/src/generated/", import.meta.url).pathname);

// `npm run build` writes dist/, which the server serves at `/` (app/api/routes/web.py).
// `npx vite` serves the sources with the API proxied to `make run`'s server.
export default defineConfig({
  resolve: {
    alias: [
      { find: /^@ginrummy\/client\/generated\/(.*)$/, replacement: GENERATED + "$1.ts" },
      { find: /^@ginrummy\/client$/, replacement: SDK },
    ],
  },
  esbuild: { jsx: "automatic", jsxImportSource: "preact" },
  build: {
    outDir: "dist",
    target: "es2020",
    assetsInlineLimit: 0,
    reportCompressedSize: false,
    rollupOptions: {
      // The service worker is its own entry at a fixed, unhashed path: /sw.js, scope /.
      input: { index: "index.html", sw: "src/sw/sw.ts" },
      output: {
        entryFileNames: (chunk) => (chunk.name === "sw" ? "sw.js" : "assets/[name]-[hash].js"),
      },
    },
  },
  server: {
    proxy: { "/v1": { target: "http://127.0.0.1:8000", ws: true } },
    fs: { allow: [".", "../clients/typescript"] },
  },
});
