// Test helpers: render inside the same provider as in Airflow, answer the API from a map.
import { render } from "@testing-library/react";
import type { ReactElement } from "react";
import { vi } from "vitest";

import { InAirflow } from "./host";

export const renderInAirflow = (element: ReactElement) => render(<InAirflow>{element}</InAirflow>);

type Answer = { body: unknown; status?: number };

/** fetch answered by API path (after /rewind/api/v1/); records the URLs asked for. */
export const mockApi = (answers: Record<string, Answer>) => {
  const asked: Array<URL> = [];
  const fetchMock = vi.fn(async (input: RequestInfo | URL) => {
    const url = new URL(String(input));

    asked.push(url);
    const path = url.pathname.split("/rewind/api/v1/")[1] ?? "";
    const answer = answers[path] ?? { body: { detail: `no answer for ${path}` }, status: 500 };

    return new Response(JSON.stringify(answer.body), {
      headers: { "Content-Type": "application/json" },
      status: answer.status ?? 200,
    });
  });

  vi.stubGlobal("fetch", fetchMock);

  return asked;
};
