import { Badge, Box, HStack, Heading, Stack, Table, Text } from "@chakra-ui/react";

import type { Step } from "../api";
import { humanBytes } from "../format";

type Result = { expectation?: unknown; rule?: unknown; success?: unknown };

const TITLES: Record<string, string> = {
  effective_retention: "1. Retention plan",
  expire_versions: "2. Expired versions into fail-safe",
  purge_failsafe: "3. Fail-safe purge",
  storage_metrics: "4. Storage metrics",
  validate: "5. Great Expectations",
};

const isFigure = (value: unknown): value is boolean | number | string =>
  typeof value === "number" || typeof value === "string" || typeof value === "boolean";

/** A figure as shown: bytes for people (exact count in the tooltip), seconds, counts. */
const shown = (key: string, value: boolean | number | string): string => {
  if (typeof value === "number" && key.includes("bytes")) {
    return humanBytes(value);
  }
  if (typeof value === "number" && key.endsWith("_s")) {
    return `${value} s`;
  }

  return String(value);
};

const Figures = ({ step }: { readonly step: Step }) => {
  const figures = Object.entries(step).filter(
    ([key, value]) => !["run_id", "step", "elapsed_s"].includes(key) && isFigure(value),
  );

  return (
    <HStack flexWrap="wrap" gap={2}>
      {figures.map(([key, value]) => (
        <Badge
          data-figure={key}
          data-value={String(value)}
          key={key}
          maxW="full"
          overflowWrap="anywhere"
          title={`${key}: ${String(value)}`}
          variant="surface"
          whiteSpace="normal"
        >
          {key.replaceAll("_", " ")}: {shown(key, value as boolean | number | string)}
        </Badge>
      ))}
    </HStack>
  );
};

const Results = ({ results }: { readonly results: Array<Result> }) => (
  <Table.ScrollArea mt={2}>
    <Table.Root data-testid="expectations" size="sm">
      <Table.Header>
        <Table.Row>
          <Table.ColumnHeader>Expectation</Table.ColumnHeader>
          <Table.ColumnHeader>Rule</Table.ColumnHeader>
          <Table.ColumnHeader>Result</Table.ColumnHeader>
        </Table.Row>
      </Table.Header>
      <Table.Body>
        {results.map((result, index) => (
          <Table.Row data-success={String(result.success)} key={index}>
            <Table.Cell>{String(result.expectation ?? "")}</Table.Cell>
            <Table.Cell>{String(result.rule ?? "")}</Table.Cell>
            <Table.Cell>
              <Badge colorPalette={result.success === true ? "green" : "red"}>
                {result.success === true ? "passed" : "failed"}
              </Badge>
            </Table.Cell>
          </Table.Row>
        ))}
      </Table.Body>
    </Table.Root>
  </Table.ScrollArea>
);

/** SPEC R29, R35: what each step of one lifecycle run recorded. */
export const RunSteps = ({ steps }: { readonly steps: Array<Step> }) => (
  <Stack data-testid="steps" gap={3} minW={0}>
    {steps.map((step) => {
      const error = step.error as { code?: string; message?: string } | undefined;
      const results = Array.isArray(step.results) ? (step.results as Array<Result>) : undefined;

      return (
        <Box borderColor="border" borderRadius="md" borderWidth="1px" data-step={step.step} key={step.step} minW={0} p={3}>
          <HStack flexWrap="wrap" justifyContent="space-between" mb={2}>
            <Heading minW={0} overflowWrap="anywhere" size="sm">
              {TITLES[step.step] ?? step.step}
            </Heading>
            {typeof step.elapsed_s === "number" ? (
              <Text color="fg.muted" data-testid="elapsed" fontSize="sm">
                {step.elapsed_s} s
              </Text>
            ) : undefined}
          </HStack>
          {error === undefined ? undefined : (
            <Text color="fg.error" mb={2} overflowWrap="anywhere">
              {error.code}: {error.message}
            </Text>
          )}
          <Figures step={step} />
          {results === undefined ? undefined : <Results results={results} />}
        </Box>
      );
    })}
  </Stack>
);
