import { Box, Button, HStack, Heading, Link, Stack, Text } from "@chakra-ui/react";
import { type ReactNode, useEffect, useState } from "react";

import { type DroppedObject, type FailsafeBatch, type Group, type LifecycleRun, type Me, type Storage, airflowUrl } from "../api";
import { DroppedTable } from "../components/DroppedTable";
import { FiguresTable } from "../components/FiguresTable";
import { FailsafeTable } from "../components/FailsafeTable";
import { RunsTable } from "../components/RunsTable";
import { Empty, Show } from "../components/States";
import { StorageChart } from "../components/StorageChart";
import { formatInstant } from "../format";
import { useApi } from "../useApi";

export const RANGES = [7, 14, 30] as const;
const SCOPE_KEYS = ["database", "schema", "table", "now"] as const;

export type PageState = {
  database: string | null;
  now: string | null;
  range: number;
  schema: string | null;
  table: string | null;
};

/** The page's state from its URL's query string: deep links can be shared. */
export const readState = (search: string): PageState => {
  const query = new URLSearchParams(search);
  const range = Number(query.get("range"));

  return {
    database: query.get("database"),
    now: query.get("now"),
    range: (RANGES as ReadonlyArray<number>).includes(range) ? range : 30,
    schema: query.get("schema"),
    table: query.get("table"),
  };
};

/** The Rewind page's URL for a state (under Airflow's base URL). */
export const pageUrl = (state: Partial<PageState>): string =>
  airflowUrl("plugin/rewind", {
    database: state.database,
    now: state.now,
    range: state.range === undefined || state.range === 30 ? undefined : String(state.range),
    schema: state.schema,
    table: state.table,
  });

const groupState = (state: PageState, group: Group): PageState => ({
  ...state,
  database: group.database,
  schema: group.schema,
  table: group.table,
});

const Section = ({ children, id, title }: { readonly children: ReactNode; readonly id: string; readonly title: string }) => (
  <Box as="section" data-testid={id}>
    <Heading as="h2" mb={2} size="md">
      {title}
    </Heading>
    {children}
  </Box>
);

const Breadcrumbs = ({ state }: { readonly state: PageState }) => {
  const parts = [
    { label: "Account", state: { ...state, database: null, schema: null, table: null } },
    ...(state.database ? [{ label: state.database, state: { ...state, schema: null, table: null } }] : []),
    ...(state.schema ? [{ label: state.schema, state: { ...state, table: null } }] : []),
    ...(state.table ? [{ label: state.table, state }] : []),
  ];

  return (
    <HStack data-testid="scope" gap={1}>
      {parts.map((part, index) => (
        <HStack gap={1} key={part.label}>
          {index > 0 ? <Text color="fg.muted">/</Text> : undefined}
          <Link aria-current={index === parts.length - 1 ? "page" : undefined} colorPalette="blue" href={pageUrl(part.state)}>
            {part.label}
          </Link>
        </HStack>
      ))}
    </HStack>
  );
};

/** The Rewind page (Browse → Rewind): storage over time, undroppable objects, fail-safe
 * and runs (the last two for ACCOUNTADMIN). */
export const RewindPage = ({ search = globalThis.location?.search ?? "" }: { readonly search?: string }) => {
  const [state, setState] = useState<PageState>(() => readState(search));
  const scope = Object.fromEntries(SCOPE_KEYS.map((key) => [key, state[key]]));
  const me = useApi<Me>("me", { now: state.now });
  const storage = useApi<Storage>("storage", scope);
  const dropped = useApi<{ dropped: Array<DroppedObject> }>("dropped", scope);
  const admin = me.state === "ok" && me.data.accountadmin;
  const failsafe = useApi<{ batches: Array<FailsafeBatch> }>(admin ? "failsafe" : null, scope);
  const runs = useApi<{ runs: Array<LifecycleRun> }>(admin ? "runs" : null, { now: state.now });

  useEffect(() => {
    const target = pageUrl(state);

    if (globalThis.location !== undefined && globalThis.location.href !== target && globalThis.location.pathname.endsWith("/plugin/rewind")) {
      globalThis.history.replaceState(globalThis.history.state, "", target);
    }
  }, [state]);

  return (
    <Stack data-testid="rewind-page" gap={6} p={{ base: 2, md: 4 }}>
      <HStack flexWrap="wrap" justifyContent="space-between">
        <Heading as="h1" size="lg">
          Rewind: Time Travel and Fail-safe
        </Heading>
        <Show loaded={me} what="your Rewind user">
          {(who) => (
            <Text color="fg.muted" data-testid="viewer" fontSize="sm">
              {who.viewer} ({who.role || "no role"}) as of {formatInstant(who.now)}
            </Text>
          )}
        </Show>
      </HStack>
      <Breadcrumbs state={state} />
      <Section id="storage" title="Storage over time">
        <HStack gap={2} mb={2}>
          <Text color="fg.muted" fontSize="sm">
            Last
          </Text>
          {RANGES.map((days) => (
            <Button
              aria-pressed={state.range === days}
              data-range={days}
              key={days}
              onClick={() => setState({ ...state, range: days })}
              size="xs"
              variant={state.range === days ? "solid" : "outline"}
            >
              {days} days
            </Button>
          ))}
        </HStack>
        <Show loaded={storage} what="storage">
          {(data) =>
            data.days.length === 0 ? (
              <Empty>
                {data.catalog_found ? "No storage metrics yet: the first nightly run writes them." : "No Rewind catalog yet."}
              </Empty>
            ) : (
              <Stack gap={4}>
                <StorageChart days={data.days.slice(-state.range)} />
                <Text color="fg.muted" fontSize="sm">
                  Figures of the latest lifecycle run ({formatInstant(data.latest_as_of)}), as in
                  REWIND.ACCOUNT_USAGE.TABLE_STORAGE_METRICS.
                </Text>
                <FiguresTable
                  groups={data.groups}
                  linkTo={(group) => pageUrl(groupState(state, group))}
                  totals={data.totals}
                />
              </Stack>
            )
          }
        </Show>
      </Section>
      <Section id="undroppable" title="Can still be undropped">
        <Show loaded={dropped} what="dropped objects">
          {(data) => <DroppedTable dropped={data.dropped} />}
        </Show>
      </Section>
      {me.state === "ok" && !admin ? (
        <Text color="fg.muted" data-testid="admin-only">
          Fail-safe contents and lifecycle runs are shown to ACCOUNTADMIN only.
        </Text>
      ) : undefined}
      {admin ? (
        <>
          <Section id="fail-safe" title="Fail-safe and upcoming purges">
            <Show loaded={failsafe} what="fail-safe">
              {(data) => <FailsafeTable batches={data.batches} />}
            </Show>
          </Section>
          <Section id="lifecycle-runs" title="Recent lifecycle runs">
            <Show loaded={runs} what="runs">
              {(data) => <RunsTable runs={data.runs} />}
            </Show>
          </Section>
        </>
      ) : undefined}
    </Stack>
  );
};
