// Swagger UI's assets, served by the service itself: the UI must work on a
// machine with no internet. `type: "file"` embeds them in the compiled binary.
import { Elysia } from "elysia";
import { bundledFilePath } from "../bundled-file";
import bundle from "swagger-ui-dist/swagger-ui-bundle.js" with { type: "file" };
import css from "swagger-ui-dist/swagger-ui.css" with { type: "file" };

export const SWAGGER_BUNDLE_PATH = "/swagger/assets/swagger-ui-bundle.js";
export const SWAGGER_CSS_PATH = "/swagger/assets/swagger-ui.css";

const serve = (path: string, type: string) => () =>
  new Response(Bun.file(bundledFilePath(path, import.meta.url)), { headers: { "content-type": type, "cache-control": "public, max-age=86400" } });

export const swaggerAssets = new Elysia({ name: "swagger-assets" })
  .get(SWAGGER_BUNDLE_PATH, serve(bundle, "text/javascript; charset=utf-8"), { detail: { hide: true } })
  .get(SWAGGER_CSS_PATH, serve(css, "text/css; charset=utf-8"), { detail: { hide: true } });
