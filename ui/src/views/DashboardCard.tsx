import { Box, HStack, Heading, Link, SimpleGrid, Stack, Text } from "@chakra-ui/react";

import { BYTE_CLASSES, type Card } from "../api";
import { RunState } from "../components/RunState";
import { runLinks } from "../components/RunsTable";
import { Show } from "../components/States";
import { CLASS_COLORS, CLASS_LABELS, formatInstant, humanBytes } from "../format";
import { useApi } from "../useApi";
import { pageUrl } from "./RewindPage";

/** The card on Airflow's dashboard: bytes by class, the next purge, the last night. */
export const DashboardCard = () => {
  const card = useApi<Card>("card");

  return (
    <Box borderColor="border" borderRadius="md" borderWidth="1px" data-testid="rewind-card" p={4}>
      <HStack justifyContent="space-between" mb={3}>
        <Heading as="h2" size="md">
          Rewind storage
        </Heading>
        <Link colorPalette="blue" fontSize="sm" href={pageUrl({})}>
          Open the Rewind page
        </Link>
      </HStack>
      <Show loaded={card} what="storage">
        {(data) => (
          <Stack gap={3}>
            <SimpleGrid columns={{ base: 2, md: 4 }} gap={3}>
              {BYTE_CLASSES.map((byteClass) => (
                <Box data-bytes={data.totals[byteClass]} data-metric={byteClass} key={byteClass}>
                  <HStack gap={1}>
                    <Box bg={CLASS_COLORS[byteClass]} borderRadius="sm" height="8px" width="8px" />
                    <Text color="fg.muted" fontSize="xs">
                      {CLASS_LABELS[byteClass]}
                    </Text>
                  </HStack>
                  <Text fontSize="lg" fontWeight="semibold">
                    {humanBytes(data.totals[byteClass])}
                  </Text>
                </Box>
              ))}
            </SimpleGrid>
            <Text color="fg.muted" fontSize="sm">
              As of {formatInstant(data.latest_as_of)}
            </Text>
            {data.next_purge === null ? undefined : (
              <Text data-testid="next-purge" fontSize="sm">
                Next purge: {data.next_purge.table}, {humanBytes(data.next_purge.bytes)} on{" "}
                {formatInstant(data.next_purge.purge_at)}
              </Text>
            )}
            {data.last_run === null ? undefined : (
              <HStack data-testid="last-run" fontSize="sm" gap={2}>
                <Text>Last night ({formatInstant(data.last_run.now)}):</Text>
                <RunState state={data.last_run.state} />
                {runLinks(data.last_run) === undefined ? undefined : (
                  <Link colorPalette="blue" href={runLinks(data.last_run)?.tab}>
                    details
                  </Link>
                )}
              </HStack>
            )}
          </Stack>
        )}
      </Show>
    </Box>
  );
};
