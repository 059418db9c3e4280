import { Table } from "@chakra-ui/react";

import type { DroppedObject } from "../api";
import { formatInstant } from "../format";
import { Empty } from "./States";

/** SPEC R10, R11, R21: what UNDROP can still restore, and until when. */
export const DroppedTable = ({ dropped }: { readonly dropped: Array<DroppedObject> }) =>
  dropped.length === 0 ? (
    <Empty>Nothing dropped can be undropped now.</Empty>
  ) : (
    <Table.ScrollArea>
      <Table.Root data-testid="dropped" size="sm">
        <Table.Header>
          <Table.Row>
            <Table.ColumnHeader>Kind</Table.ColumnHeader>
            <Table.ColumnHeader>Name</Table.ColumnHeader>
            <Table.ColumnHeader>Dropped</Table.ColumnHeader>
            <Table.ColumnHeader textAlign="end">Retention (days)</Table.ColumnHeader>
            <Table.ColumnHeader>Undrop until</Table.ColumnHeader>
            <Table.ColumnHeader>Dropped with</Table.ColumnHeader>
          </Table.Row>
        </Table.Header>
        <Table.Body>
          {dropped.map((object) => (
            <Table.Row data-name={object.name} data-until={object.undrop_until} key={object.object_id}>
              <Table.Cell>{object.kind}</Table.Cell>
              <Table.Cell>{object.name}</Table.Cell>
              <Table.Cell>{formatInstant(object.dropped_on)}</Table.Cell>
              <Table.Cell textAlign="end">{object.retention_days}</Table.Cell>
              <Table.Cell fontWeight="semibold">{formatInstant(object.undrop_until)}</Table.Cell>
              <Table.Cell>{object.dropped_with ?? ""}</Table.Cell>
            </Table.Row>
          ))}
        </Table.Body>
      </Table.Root>
    </Table.ScrollArea>
  );
