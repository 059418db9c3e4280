import { screen, waitFor } from "@testing-library/react";

import { NIGHT, RUN } from "../fixtures";
import { mockApi, renderInAirflow } from "../testing";
import { RunTab } from "./RunTab";

describe("RunTab", () => {
  it("shows a nightly run's steps: figures, time per step and the expectations' results", async () => {
    const asked = mockApi({ [`dag_runs/rewind_nightly/${encodeURIComponent(RUN.dag_run_id ?? "")}`]: { body: NIGHT } });

    renderInAirflow(<RunTab dagId="rewind_nightly" runId={RUN.dag_run_id ?? ""} />);
    await waitFor(() => expect(screen.getByTestId("steps")).toBeInTheDocument());
    const steps = [...screen.getByTestId("steps").querySelectorAll("[data-step]")].map((s) => s.getAttribute("data-step"));

    expect(steps).toEqual(["effective_retention", "expire_versions", "purge_failsafe", "validate"]);
    const moved = screen.getByTestId("steps").querySelector('[data-figure="bytes_moved"]');

    expect(moved).toHaveAttribute("data-value", "1024");
    expect(moved).toHaveTextContent("1.0 KiB");
    expect(screen.getAllByTestId("elapsed")[1]).toHaveTextContent("1.25 s");
    const results = [...screen.getByTestId("expectations").querySelectorAll("[data-success]")];

    expect(results.map((r) => r.getAttribute("data-success"))).toEqual(["true", "false"]);
    expect(screen.getByTestId("page-link").getAttribute("href")).toContain("plugin/rewind?now=");
    expect(asked).toHaveLength(1);
  });

  it("says the tab does not apply to another DAG's run", async () => {
    mockApi({ "dag_runs/etl/manual__1": { body: { applies: false, dag_id: "etl", dag_run_id: "manual__1", run: null } } });
    renderInAirflow(<RunTab dagId="etl" runId="manual__1" />);
    await waitFor(() => expect(screen.getByTestId("empty")).toHaveTextContent("applies to runs of rewind_nightly"));
  });

  it("shows a 403 for a role that may not see lifecycle runs", async () => {
    mockApi({ "dag_runs/rewind_nightly/r1": { body: { detail: "ACCESS_DENIED: ACCOUNTADMIN only" }, status: 403 } });
    renderInAirflow(<RunTab dagId="rewind_nightly" runId="r1" />);
    await waitFor(() => expect(screen.getByTestId("error")).toHaveTextContent("ACCESS_DENIED"));
  });
});
