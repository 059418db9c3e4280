import type { ByteClass } from "./api";

const UNITS = ["KiB", "MiB", "GiB", "TiB", "PiB"];

/** Bytes for people, in binary units: 1536 -> "1.5 KiB"
 * (exact bytes below 1 KiB, never "1024.0 KiB"). */
export const humanBytes = (count: number): string => {
  if (Math.abs(count) < 1024) {
    return `${count} B`;
  }
  let value = count;
  let unit = "";

  for (const next of UNITS) {
    value /= 1024;
    unit = next;
    if (Math.round(Math.abs(value) * 10) / 10 < 1024) {
      break;
    }
  }

  return `${value.toFixed(1)} ${unit}`;
};

export const CLASS_LABELS: Record<ByteClass, string> = {
  ACTIVE_BYTES: "Active",
  FAILSAFE_BYTES: "Fail-safe",
  RETAINED_FOR_CLONE_BYTES: "Retained for clone",
  TIME_TRAVEL_BYTES: "Time travel",
};

// Chakra semantic tokens of the host's theme: they follow Airflow's light / dark mode.
export const CLASS_COLORS: Record<ByteClass, string> = {
  ACTIVE_BYTES: "var(--chakra-colors-blue-solid)",
  FAILSAFE_BYTES: "var(--chakra-colors-red-solid)",
  RETAINED_FOR_CLONE_BYTES: "var(--chakra-colors-purple-solid)",
  TIME_TRAVEL_BYTES: "var(--chakra-colors-orange-solid)",
};

/** An ISO 8601 instant as shown: "2026-03-04 13:00 UTC" (the lifecycle's clock is UTC). */
export const formatInstant = (iso: string | null | undefined): string => {
  if (!iso) {
    return "—";
  }
  const date = new Date(iso);

  if (Number.isNaN(date.getTime())) {
    return iso;
  }

  return `${date.toISOString().slice(0, 16).replace("T", " ")} UTC`;
};
