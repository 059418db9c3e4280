import { Badge, Link, Table } from "@chakra-ui/react";

import { BYTE_CLASSES, type Figures, type Group } from "../api";
import { CLASS_LABELS, humanBytes } from "../format";

type Props = {
  readonly groups: Array<Group>;
  /** The page's link to one object (a deep link of the Rewind page). */
  readonly linkTo: (group: Group) => string;
  readonly totals: Figures;
};

const sum = (figures: Figures) => BYTE_CLASSES.reduce((total, c) => total + figures[c], 0);

export const groupName = (group: Group): string =>
  [group.database, group.schema, group.table].filter((part) => part !== null).join(".");

const Cells = ({ figures }: { readonly figures: Figures }) => (
  <>
    {BYTE_CLASSES.map((byteClass) => (
      <Table.Cell data-bytes={figures[byteClass]} data-metric={byteClass} key={byteClass} textAlign="end">
        {humanBytes(figures[byteClass])}
      </Table.Cell>
    ))}
    <Table.Cell data-bytes={sum(figures)} data-metric="TOTAL" textAlign="end">
      {humanBytes(sum(figures))}
    </Table.Cell>
  </>
);

/** SPEC R33: the latest run's figures per database, schema or table, and their total. */
export const FiguresTable = ({ groups, linkTo, totals }: Props) => (
  <Table.ScrollArea>
    <Table.Root data-testid="figures" size="sm">
      <Table.Header>
        <Table.Row>
          <Table.ColumnHeader>Object</Table.ColumnHeader>
          {BYTE_CLASSES.map((byteClass) => (
            <Table.ColumnHeader key={byteClass} textAlign="end">
              {CLASS_LABELS[byteClass]}
            </Table.ColumnHeader>
          ))}
          <Table.ColumnHeader textAlign="end">Total</Table.ColumnHeader>
        </Table.Row>
      </Table.Header>
      <Table.Body>
        {groups.map((group) => (
          <Table.Row
            data-name={groupName(group)}
            data-testid="group"
            key={`${groupName(group)}#${group.table_id ?? ""}#${String(group.deleted)}`}
          >
            <Table.Cell>
              <Link colorPalette="blue" href={linkTo(group)}>
                {groupName(group)}
              </Link>
              {group.deleted ? (
                <Badge colorPalette="gray" ml={2}>
                  dropped
                </Badge>
              ) : undefined}
            </Table.Cell>
            <Cells figures={group.bytes} />
          </Table.Row>
        ))}
        <Table.Row data-testid="total" fontWeight="bold">
          <Table.Cell>Total</Table.Cell>
          <Cells figures={totals} />
        </Table.Row>
      </Table.Body>
    </Table.Root>
  </Table.ScrollArea>
);
