import { Link, Table } from "@chakra-ui/react";

import { type LifecycleRun, airflowUrl } from "../api";
import { formatInstant, humanBytes } from "../format";
import { RunState } from "./RunState";
import { Empty } from "./States";

const figure = (run: LifecycleRun, step: string, key: string): number | undefined => {
  const value = run.steps?.find((s) => s.step === step)?.[key];

  return typeof value === "number" ? value : undefined;
};

/** The Airflow run of a lifecycle run, and its Rewind tab. */
export const runLinks = (run: LifecycleRun) =>
  run.dag_id === null || run.dag_run_id === null
    ? undefined
    : {
        run: airflowUrl(`dags/${run.dag_id}/runs/${encodeURIComponent(run.dag_run_id)}`),
        tab: airflowUrl(`dags/${run.dag_id}/runs/${encodeURIComponent(run.dag_run_id)}/plugin/rewind_run`),
      };

/** SPEC R29, R35: the last lifecycle runs, newest first, linked to their Airflow runs. */
export const RunsTable = ({ runs }: { readonly runs: Array<LifecycleRun> }) =>
  runs.length === 0 ? (
    <Empty>No lifecycle run yet.</Empty>
  ) : (
    <Table.ScrollArea>
      <Table.Root data-testid="runs" size="sm">
        <Table.Header>
          <Table.Row>
            <Table.ColumnHeader>Clock</Table.ColumnHeader>
            <Table.ColumnHeader>State</Table.ColumnHeader>
            <Table.ColumnHeader textAlign="end">Into fail-safe</Table.ColumnHeader>
            <Table.ColumnHeader textAlign="end">Purged</Table.ColumnHeader>
            <Table.ColumnHeader>Airflow run</Table.ColumnHeader>
          </Table.Row>
        </Table.Header>
        <Table.Body>
          {runs.map((run) => {
            const links = runLinks(run);
            const moved = figure(run, "expire_versions", "bytes_moved");
            const purged = figure(run, "purge_failsafe", "bytes_purged");

            return (
              <Table.Row data-run-id={run.run_id} key={run.run_id}>
                <Table.Cell>{formatInstant(run.now)}</Table.Cell>
                <Table.Cell>
                  <RunState state={run.state} />
                </Table.Cell>
                <Table.Cell textAlign="end">{moved === undefined ? "—" : humanBytes(moved)}</Table.Cell>
                <Table.Cell textAlign="end">{purged === undefined ? "—" : humanBytes(purged)}</Table.Cell>
                <Table.Cell>
                  {links === undefined ? (
                    "—"
                  ) : (
                    <>
                      <Link colorPalette="blue" href={links.run}>
                        {run.dag_run_id}
                      </Link>{" "}
                      (<Link colorPalette="blue" href={links.tab}>lifecycle</Link>)
                    </>
                  )}
                </Table.Cell>
              </Table.Row>
            );
          })}
        </Table.Body>
      </Table.Root>
    </Table.ScrollArea>
  );
