import { Box, HStack, Heading, Link, Stack, Text } from "@chakra-ui/react";

import type { DagRunSummary, Group } from "../api";
import { FiguresTable } from "../components/FiguresTable";
import { RunState } from "../components/RunState";
import { RunSteps } from "../components/RunSteps";
import { Empty, Show } from "../components/States";
import { formatInstant } from "../format";
import { useApi } from "../useApi";
import { pageUrl } from "./RewindPage";

export type RunTabProps = { readonly dagId?: string; readonly runId?: string };

/** The Rewind page with one table of a night selected, as of that night: its chart,
 * figures and undroppable objects narrowed to that table (a deep link of the page). */
export const tablePageUrl = (group: Group, now: string): string =>
  pageUrl({ database: group.database, now, schema: group.schema, table: group.table });

/** The tab on a DAG run: that night's lifecycle for a rewind_nightly run. */
export const RunTab = ({ dagId, runId }: RunTabProps) => {
  const path =
    dagId === undefined || runId === undefined
      ? null
      : `dag_runs/${encodeURIComponent(dagId)}/${encodeURIComponent(runId)}`;
  const summary = useApi<DagRunSummary>(path);

  if (path === null) {
    return <Empty>Open a DAG run to see its lifecycle.</Empty>;
  }

  return (
    <Stack data-testid="rewind-run" gap={4} maxW="full" minW={0} p={{ base: 2, md: 4 }}>
      <Show loaded={summary} what="the lifecycle run">
        {(data) => {
          if (!data.applies) {
            return (
              <Empty>
                The Rewind tab applies to runs of rewind_nightly; {data.dag_id} is not a lifecycle DAG.
              </Empty>
            );
          }
          if (data.run === null) {
            return <Empty>This run has recorded no lifecycle step yet.</Empty>;
          }
          const night = data.run.now;

          return (
            <Stack gap={3} minW={0}>
              <HStack flexWrap="wrap" justifyContent="space-between" minW={0}>
                <Heading as="h2" minW={0} overflowWrap="anywhere" size="md">
                  Lifecycle run of {formatInstant(night)} <RunState state={data.run.state} />
                </Heading>
                <Link colorPalette="blue" data-testid="page-link" href={pageUrl({ now: night })} overflowWrap="anywhere">
                  Storage as of this night on the Rewind page
                </Link>
              </HStack>
              <Text color="fg.muted" fontSize="sm" overflowWrap="anywhere">
                Lifecycle run {data.run.run_id}
              </Text>
              <RunSteps steps={data.run.steps ?? []} />
              {data.tables === undefined || data.tables.length === 0 || data.totals === undefined ? undefined : (
                <Box as="section" data-testid="night-tables" minW={0}>
                  <Heading as="h3" mb={2} overflowWrap="anywhere" size="sm">
                    Tables this night (TABLE_STORAGE_METRICS as of {formatInstant(night)})
                  </Heading>
                  <FiguresTable
                    groups={data.tables}
                    linkTo={(group) => tablePageUrl(group, night)}
                    totals={data.totals}
                  />
                </Box>
              )}
            </Stack>
          );
        }}
      </Show>
    </Stack>
  );
};
