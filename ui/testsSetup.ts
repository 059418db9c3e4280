import "@testing-library/jest-dom/vitest";
import { configure } from "@testing-library/react";

// The machine is shared with Spark tests: give findBy / waitFor more than 1 s.
configure({ asyncUtilTimeout: 10_000 });
