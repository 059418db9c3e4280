import { Table } from "@chakra-ui/react";

import type { FailsafeBatch } from "../api";
import { formatInstant, humanBytes } from "../format";
import { Empty } from "./States";

/** SPEC R12, R38: fail-safe contents and when each batch is purged (ACCOUNTADMIN). */
export const FailsafeTable = ({ batches }: { readonly batches: Array<FailsafeBatch> }) =>
  batches.length === 0 ? (
    <Empty>Fail-safe holds nothing.</Empty>
  ) : (
    <Table.ScrollArea>
      <Table.Root data-testid="failsafe" size="sm">
        <Table.Header>
          <Table.Row>
            <Table.ColumnHeader>Table</Table.ColumnHeader>
            <Table.ColumnHeader textAlign="end">Files</Table.ColumnHeader>
            <Table.ColumnHeader textAlign="end">Bytes</Table.ColumnHeader>
            <Table.ColumnHeader>Left time travel</Table.ColumnHeader>
            <Table.ColumnHeader>Purged on</Table.ColumnHeader>
          </Table.Row>
        </Table.Header>
        <Table.Body>
          {batches.map((batch) => (
            <Table.Row
              data-name={batch.table}
              key={`${batch.table_id}#${batch.left_time_travel_at}#${batch.purge_at}`}
            >
              <Table.Cell>{batch.table}</Table.Cell>
              <Table.Cell textAlign="end">{batch.files}</Table.Cell>
              <Table.Cell data-bytes={batch.bytes} textAlign="end">
                {humanBytes(batch.bytes)}
              </Table.Cell>
              <Table.Cell>{formatInstant(batch.left_time_travel_at)}</Table.Cell>
              <Table.Cell fontWeight="semibold">{formatInstant(batch.purge_at)}</Table.Cell>
            </Table.Row>
          ))}
        </Table.Body>
      </Table.Root>
    </Table.ScrollArea>
  );
