import { screen, waitFor } from "@testing-library/react";

import { CARD } from "../fixtures";
import { mockApi, renderInAirflow } from "../testing";
import { DashboardCard } from "./DashboardCard";

describe("DashboardCard", () => {
  it("shows the totals by class, the next purge and the last night", async () => {
    mockApi({ card: { body: CARD } });
    renderInAirflow(<DashboardCard />);
    await waitFor(() => expect(screen.getByTestId("next-purge")).toBeInTheDocument());
    const card = screen.getByTestId("rewind-card");

    expect(card.querySelector('[data-metric="ACTIVE_BYTES"]')).toHaveAttribute("data-bytes", "2048");
    expect(card.querySelector('[data-metric="ACTIVE_BYTES"]')).toHaveTextContent("2.0 KiB");
    expect(screen.getByTestId("next-purge")).toHaveTextContent("SHOP.PUBLIC.ORDERS, 1.0 KiB on 2026-03-11 12:00 UTC");
    expect(screen.getByTestId("last-run").querySelector("[data-state]")).toHaveAttribute("data-state", "success");
  });

  it("shows totals alone to a role without ACCOUNTADMIN", async () => {
    mockApi({ card: { body: { ...CARD, last_run: null, next_purge: null, role: "CLERK" } } });
    renderInAirflow(<DashboardCard />);
    await waitFor(() => expect(screen.getByText(/As of/u)).toBeInTheDocument());
    expect(screen.queryByTestId("next-purge")).toBeNull();
    expect(screen.queryByTestId("last-run")).toBeNull();
  });
});
