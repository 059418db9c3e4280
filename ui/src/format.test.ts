import { formatInstant, humanBytes } from "./format";

describe("humanBytes", () => {
  it.each([
    [0, "0 B"],
    [1023, "1023 B"],
    [1024, "1.0 KiB"],
    [1536, "1.5 KiB"],
    [1024 ** 2 - 1, "1.0 MiB"],
    [1024 ** 2, "1.0 MiB"],
    [5 * 1024 ** 3 + 1024 ** 3 / 2, "5.5 GiB"],
    [3 * 1024 ** 4, "3.0 TiB"],
    [2048 * 1024 ** 5, "2048.0 PiB"],
  ])("%d bytes is %s", (count, shown) => {
    expect(humanBytes(count)).toBe(shown);
  });
});

describe("formatInstant", () => {
  it("shows UTC to the minute", () => {
    expect(formatInstant("2026-03-04T13:00:00+00:00")).toBe("2026-03-04 13:00 UTC");
    expect(formatInstant(null)).toBe("—");
  });
});
