// One UMD bundle per view (the Airflow UI caches a plugin's code by bundle URL and keeps
// each app's component under globalThis[name]): rewind-page.js (nav), rewind-run.js
// (dag_run tab), rewind-card.js (dashboard card), written to include/rewind/ui_static/.
import { build } from "vite";

for (const entry of ["page", "run", "card"]) {
  process.env.REWIND_ENTRY = entry;
  await build({ configFile: "vite.config.ts", logLevel: "warn" });
}
