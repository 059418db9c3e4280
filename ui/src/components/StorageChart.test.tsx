import { STORAGE } from "../fixtures";
import { renderInAirflow } from "../testing";
import { StorageChart } from "./StorageChart";

describe("StorageChart", () => {
  it("stacks the four byte classes of every day, each with its exact bytes and a tooltip", () => {
    const { container } = renderInAirflow(<StorageChart days={STORAGE.days} />);
    const segments = [...container.querySelectorAll("rect.segment")];

    expect(segments).toHaveLength(2 * 4);
    const lastDay = segments.filter((s) => s.getAttribute("data-date") === "2026-03-04");

    expect(Object.fromEntries(lastDay.map((s) => [s.getAttribute("data-metric"), Number(s.getAttribute("data-bytes"))]))).toEqual(
      STORAGE.days[1]?.bytes,
    );
    expect(lastDay[0]?.querySelector("title")?.textContent).toBe("2026-03-04 · Active: 2.0 KiB (2048 bytes)");
  });

  it("draws the tallest day to the top of the plot", () => {
    const { container } = renderInAirflow(<StorageChart days={STORAGE.days} />);
    const heights = [...container.querySelectorAll('rect[data-date="2026-03-04"]')].map((r) => Number(r.getAttribute("height")));

    expect(heights.reduce((a, b) => a + b, 0)).toBeCloseTo(240 - 16 - 24);
  });
});
