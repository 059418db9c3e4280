import { Badge } from "@chakra-ui/react";

import type { LifecycleRun } from "../api";

const PALETTES = { failed: "red", running: "blue", success: "green" } as const;

export const RunState = ({ state }: { readonly state: LifecycleRun["state"] }) => (
  <Badge colorPalette={PALETTES[state]} data-state={state}>
    {state}
  </Badge>
);
