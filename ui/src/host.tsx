import { ChakraProvider, defaultSystem } from "@chakra-ui/react";
import type { ReactNode } from "react";

declare global {
  // Set by the Airflow UI for its plugins: its Chakra system (theme, color mode).
  var ChakraUISystem: Parameters<typeof ChakraProvider>[0]["value"] | undefined;
}

/** A view inside Airflow's UI, themed by Airflow's own Chakra system (light / dark /
 * system follow Airflow's color mode through its semantic tokens). */
export const InAirflow = ({ children }: { readonly children: ReactNode }) => (
  <ChakraProvider value={globalThis.ChakraUISystem ?? defaultSystem}>{children}</ChakraProvider>
);
