/// <reference types="vitest/config" />
// Rewind's views as Airflow 3 react_apps (issue 29), after apache/airflow's
// dev/react-plugin-tools template: a Vite library build in UMD form, one bundle per view
// (build.mjs sets REWIND_ENTRY), React, react-dom, the JSX runtime, Chakra UI and Emotion
// taken from the globals the Airflow UI sets, so the view renders in Airflow's own React
// tree with its theme and color mode.
import react from "@vitejs/plugin-react";
import { resolve } from "node:path";
import { defineConfig } from "vite";

export const HOST_GLOBALS: Record<string, string> = {
  react: "React",
  "react-dom": "ReactDOM",
  "react/jsx-runtime": "ReactJSXRuntime",
  "@chakra-ui/react": "ChakraUI",
  "@emotion/react": "EmotionReact",
};

const entry = process.env.REWIND_ENTRY ?? "page";

export default defineConfig(({ command }) => ({
  base: "./",
  build: {
    emptyOutDir: false,
    // REWIND_UI_OUT: elsewhere, to compare a fresh build with the committed bundles.
    outDir: process.env.REWIND_UI_OUT ?? resolve(__dirname, "../include/rewind/ui_static"),
    lib: {
      entry: resolve(__dirname, "src/entries", `${entry}.tsx`),
      fileName: () => `rewind-${entry}.js`,
      formats: ["umd"],
      name: "AirflowPlugin",
    },
    rollupOptions: {
      external: Object.keys(HOST_GLOBALS),
      output: { exports: "default", globals: HOST_GLOBALS },
    },
  },
  // The library build has no bundler after it to replace process.env (tests keep React's
  // development build, which has act()).
  define: command === "build" ? { "process.env.NODE_ENV": JSON.stringify("production") } : {},
  plugins: [react()],
  test: {
    environment: "happy-dom",
    globals: true,
    setupFiles: "./testsSetup.ts",
  },
}));
