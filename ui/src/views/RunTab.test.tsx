import { screen, waitFor } from "@testing-library/react";

import { NIGHT, RUN } from "../fixtures";
import { mockApi, renderInAirflow } from "../testing";
import { RunTab, tablePageUrl } from "./RunTab";

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

  it("lists the night's tables with their figures, each linked to the Rewind page with that table selected as of that night", async () => {
    mockApi({ [`dag_runs/rewind_nightly/${encodeURIComponent(RUN.dag_run_id ?? "")}`]: { body: NIGHT } });
    renderInAirflow(<RunTab dagId="rewind_nightly" runId={RUN.dag_run_id ?? ""} />);
    await waitFor(() => expect(screen.getByTestId("night-tables")).toBeInTheDocument());
    const rows = [...screen.getByTestId("night-tables").querySelectorAll('[data-testid="group"]')];

    expect(rows.map((row) => row.getAttribute("data-name"))).toEqual(["LAB.PUBLIC.OLD", "SHOP.PUBLIC.ORDERS"]);
    const link = new URL(rows[1]?.querySelector("a")?.getAttribute("href") ?? "");

    expect(link.pathname.endsWith("/plugin/rewind")).toBe(true);
    expect(Object.fromEntries(link.searchParams)).toEqual({ database: "SHOP", now: RUN.now, schema: "PUBLIC", table: "ORDERS" });
    expect(rows[0]?.querySelector('[data-metric="FAILSAFE_BYTES"]')).toHaveAttribute("data-bytes", "1024");
    const total = screen.getByTestId("night-tables").querySelector('[data-testid="total"] [data-metric="TOTAL"]');

    expect(total).toHaveAttribute("data-bytes", String(2048 + 512 + 1024));
  });

  it("builds a table's link from its names, not its displayed (dotted) name", () => {
    const quoted = { ...NIGHT.tables![1]!, database: "My.Db", table: "a.b" };

    expect(Object.fromEntries(new URL(tablePageUrl(quoted, RUN.now)).searchParams)).toMatchObject({ database: "My.Db", table: "a.b" });
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
