import { Box, HStack, Text } from "@chakra-ui/react";
import { useEffect, useRef, useState } from "react";

import { BYTE_CLASSES, type Day } from "../api";
import { CLASS_COLORS, CLASS_LABELS, humanBytes } from "../format";

const DEFAULT_WIDTH = 800;
const MIN_WIDTH = 320;
const HEIGHT = 240;
const MAX_BAR = 48;
const TOP = 16;
const LEFT = 72;
const BOTTOM = 24;

type Props = { readonly days: Array<Day> };

/** SPEC R33, R35: the four byte classes of each day, stacked; a tooltip per segment. */
export const StorageChart = ({ days }: Props) => {
  // Drawn at the container's own width, so labels keep their size on any screen.
  const container = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(DEFAULT_WIDTH);

  useEffect(() => {
    const element = container.current;

    if (element === null || typeof ResizeObserver === "undefined") {
      return undefined;
    }
    const observer = new ResizeObserver(([entry]) => {
      if (entry !== undefined && entry.contentRect.width > 0) {
        setWidth(Math.max(MIN_WIDTH, Math.floor(entry.contentRect.width)));
      }
    });

    observer.observe(element);

    return () => observer.disconnect();
  }, []);

  const totals = days.map((day) => BYTE_CLASSES.reduce((sum, c) => sum + day.bytes[c], 0));
  const top = Math.max(1, ...totals);
  const plotHeight = HEIGHT - TOP - BOTTOM;
  const slot = (width - LEFT) / Math.max(1, days.length);
  const barWidth = Math.min(MAX_BAR, Math.max(2, slot * 0.7));
  const labelEvery = Math.max(1, Math.ceil(days.length / Math.max(2, Math.floor(width / 70))));

  return (
    <Box data-testid="storage-chart" overflow="hidden" ref={container} width="100%">
      <svg
        aria-label="Storage by class over time"
        role="img"
        height={HEIGHT}
        style={{ display: "block" }}
        viewBox={`0 0 ${width} ${HEIGHT}`}
        width={width}
      >
        <line stroke="var(--chakra-colors-border)" x1={LEFT} x2={width} y1={HEIGHT - BOTTOM} y2={HEIGHT - BOTTOM} />
        <text fill="var(--chakra-colors-fg-muted)" fontSize="11" textAnchor="end" x={LEFT - 6} y={TOP + 4}>
          {humanBytes(top)}
        </text>
        <text fill="var(--chakra-colors-fg-muted)" fontSize="11" textAnchor="end" x={LEFT - 6} y={HEIGHT - BOTTOM}>
          0 B
        </text>
        {days.map((day, index) => {
          const x = LEFT + index * slot + (slot - barWidth) / 2;
          let y = HEIGHT - BOTTOM;

          return (
            <g data-date={day.date} key={day.date}>
              {BYTE_CLASSES.map((byteClass) => {
                const bytes = day.bytes[byteClass];
                const height = (bytes / top) * plotHeight;

                y -= height;

                return (
                  <rect
                    className="segment"
                    data-bytes={bytes}
                    data-date={day.date}
                    data-metric={byteClass}
                    fill={CLASS_COLORS[byteClass]}
                    height={height}
                    key={byteClass}
                    width={barWidth}
                    x={x}
                    y={y}
                  >
                    <title>{`${day.date} · ${CLASS_LABELS[byteClass]}: ${humanBytes(bytes)} (${bytes} bytes)`}</title>
                  </rect>
                );
              })}
              {index % labelEvery === 0 ? (
                <text
                  fill="var(--chakra-colors-fg-muted)"
                  fontSize="11"
                  textAnchor="middle"
                  x={x + barWidth / 2}
                  y={HEIGHT - 6}
                >
                  {day.date.slice(5)}
                </text>
              ) : undefined}
            </g>
          );
        })}
      </svg>
      <HStack flexWrap="wrap" gap={4} mt={2}>
        {BYTE_CLASSES.map((byteClass) => (
          <HStack gap={1} key={byteClass}>
            <Box bg={CLASS_COLORS[byteClass]} borderRadius="sm" height="10px" width="10px" />
            <Text color="fg.muted" fontSize="sm">
              {CLASS_LABELS[byteClass]}
            </Text>
          </HStack>
        ))}
      </HStack>
    </Box>
  );
};
