import { screen, waitFor } from "@testing-library/react";

import { ADMIN, ANALYST, NIGHT, RUN, STORAGE } from "../fixtures";
import { mockApi, renderInAirflow } from "../testing";
import { RewindPage, pageUrl, readState } from "./RewindPage";
import { tablePageUrl } from "./RunTab";

const DROPPED = {
  dropped: [
    {
      dropped_on: "2026-03-04T12:00:00Z",
      dropped_with: null,
      kind: "TABLE",
      name: "LAB.PUBLIC.SCRATCH",
      object_id: 7,
      retention_days: 5,
      undrop_until: "2026-03-09T12:00:00Z",
    },
  ],
};
const FAILSAFE = {
  batches: [
    { bytes: 1024, files: 2, left_time_travel_at: "2026-03-04T12:00:00Z", purge_at: "2026-03-11T12:00:00Z", table: "SHOP.PUBLIC.ORDERS", table_id: 3 },
  ],
};

describe("RewindPage", () => {
  it("shows a loading state, then storage, undroppable objects, fail-safe and runs to ACCOUNTADMIN", async () => {
    mockApi({
      dropped: { body: DROPPED },
      failsafe: { body: FAILSAFE },
      me: { body: ADMIN },
      runs: { body: { runs: [RUN] } },
      storage: { body: STORAGE },
    });
    renderInAirflow(<RewindPage search="" />);
    expect(screen.getAllByTestId("loading").length).toBeGreaterThan(0);
    await waitFor(() => expect(screen.getByTestId("failsafe")).toBeInTheDocument());
    expect(screen.getByTestId("storage-chart")).toBeInTheDocument();
    expect(screen.getByTestId("total").querySelector('[data-metric="FAILSAFE_BYTES"]')).toHaveAttribute("data-bytes", "1024");
    expect(screen.getByTestId("dropped")).toHaveTextContent("LAB.PUBLIC.SCRATCH");
    expect(screen.getByTestId("dropped")).toHaveTextContent("2026-03-09 12:00 UTC");
    await waitFor(() => expect(screen.getByTestId("runs")).toBeInTheDocument());
    expect(screen.getByTestId("runs").querySelector("a")?.getAttribute("href")).toContain(
      "dags/rewind_nightly/runs/scheduled__2026-03-04T00%3A00%3A00%2B00%3A00",
    );
  });

  it("never asks a non-admin's fail-safe or runs, and says why they are not shown", async () => {
    const asked = mockApi({
      dropped: { body: { dropped: [] } },
      me: { body: ANALYST },
      storage: { body: { ...STORAGE, groups: [STORAGE.groups[1]], role: "CLERK", viewer: "ANALYST" } },
    });

    renderInAirflow(<RewindPage search="?database=SHOP" />);
    await waitFor(() => expect(screen.getByTestId("admin-only")).toBeInTheDocument());
    expect(screen.queryByTestId("fail-safe")).toBeNull();
    expect(asked.map((url) => url.pathname.split("/").pop())).not.toContain("failsafe");
    expect(asked.map((url) => url.pathname.split("/").pop())).not.toContain("runs");
    expect(asked.find((url) => url.pathname.endsWith("/storage"))?.searchParams.get("database")).toBe("SHOP");
  });

  it("shows an empty state before the first nightly run", async () => {
    mockApi({
      dropped: { body: { dropped: [] } },
      me: { body: ANALYST },
      storage: { body: { ...STORAGE, days: [], groups: [], metrics_found: false } },
    });
    renderInAirflow(<RewindPage search="" />);
    await waitFor(() => expect(screen.getByText(/No storage metrics yet/u)).toBeInTheDocument());
  });

  it("shows an empty state for a home without a catalog", async () => {
    mockApi({
      dropped: { body: { dropped: [] } },
      me: { body: ANALYST },
      storage: { body: { ...STORAGE, catalog_found: false, days: [], groups: [], metrics_found: false } },
    });
    renderInAirflow(<RewindPage search="" />);
    await waitFor(() => expect(screen.getByText(/No Rewind catalog yet/u)).toBeInTheDocument());
  });

  it("shows the API's one-line error, with a hint for a 401", async () => {
    const refused = { body: { detail: "Log in to Airflow first." }, status: 401 };

    mockApi({ dropped: refused, me: refused, storage: refused });
    renderInAirflow(<RewindPage search="" />);
    await waitFor(() => expect(screen.getAllByTestId("error").length).toBe(3));
    expect(screen.getAllByTestId("error")[0]).toHaveTextContent("Log in to Airflow first.");
    expect(screen.getAllByTestId("error")[0]).toHaveAttribute("data-status", "401");
  });
});

describe("deep links", () => {
  it("open the page on the table a night's tab links to: that table alone, as of that night, marked in the scope", async () => {
    const orders = NIGHT.tables![1]!;
    const asked = mockApi({
      dropped: { body: { dropped: [] } },
      me: { body: ANALYST },
      storage: { body: { ...STORAGE, groups: [orders], scope: { database: "SHOP", schema: "PUBLIC", table: "ORDERS" }, totals: orders.bytes } },
    });

    renderInAirflow(<RewindPage search={new URL(tablePageUrl(orders, RUN.now)).search} />);
    await waitFor(() => expect(screen.getByTestId("figures")).toBeInTheDocument());
    const storage = asked.find((url) => url.pathname.endsWith("/storage"));

    expect(Object.fromEntries(storage?.searchParams ?? [])).toEqual({ database: "SHOP", now: RUN.now, schema: "PUBLIC", table: "ORDERS" });
    expect(screen.getByTestId("scope").querySelector('[aria-current="page"]')).toHaveTextContent("ORDERS");
    expect(screen.getAllByTestId("group").map((row) => row.getAttribute("data-name"))).toEqual(["SHOP.PUBLIC.ORDERS"]);
  });

  it("read the scope, range and clock from the query string and write them back", () => {
    const state = readState("?database=SHOP&schema=PUBLIC&range=7&now=2026-03-04T14:00:00Z");

    expect(state).toEqual({ database: "SHOP", now: "2026-03-04T14:00:00Z", range: 7, schema: "PUBLIC", table: null });
    expect(readState("?range=99").range).toBe(30);
    const url = new URL(pageUrl(state));

    expect(url.pathname.endsWith("/plugin/rewind")).toBe(true);
    expect(readState(url.search)).toEqual(state);
  });
});
