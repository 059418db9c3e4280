import { Box, Spinner, Text } from "@chakra-ui/react";
import type { ReactNode } from "react";

import { ApiError } from "../api";
import type { Loaded } from "../useApi";

export const Loading = ({ what }: { readonly what: string }) => (
  <Box alignItems="center" data-testid="loading" display="flex" gap={2} py={4}>
    <Spinner size="sm" />
    <Text color="fg.muted">Loading {what}…</Text>
  </Box>
);

export const Empty = ({ children }: { readonly children: ReactNode }) => (
  <Text color="fg.muted" data-testid="empty" py={2}>
    {children}
  </Text>
);

export const Failed = ({ error }: { readonly error: Error }) => {
  const status = error instanceof ApiError ? error.status : undefined;
  const hint =
    status === 401 ? "Log in to Airflow again." : status === 403 ? "Your role may not see this." : undefined;

  return (
    <Box
      bg="bg.error"
      borderColor="border.error"
      borderRadius="md"
      borderWidth="1px"
      data-status={status}
      data-testid="error"
      p={3}
    >
      <Text color="fg.error">{error.message}</Text>
      {hint === undefined ? undefined : <Text color="fg.muted">{hint}</Text>}
    </Box>
  );
};

/** The loading, error or loaded state of one request. */
export const Show = <T,>({
  children,
  loaded,
  what,
}: {
  readonly children: (data: T) => ReactNode;
  readonly loaded: Loaded<T>;
  readonly what: string;
}) => {
  if (loaded.state === "loading") {
    return <Loading what={what} />;
  }
  if (loaded.state === "error") {
    return <Failed error={loaded.error} />;
  }

  return <>{children(loaded.data)}</>;
};
