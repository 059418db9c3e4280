import type { Card, DagRunSummary, Figures, LifecycleRun, Me, Storage } from "./api";

export const figures = (active: number, timeTravel: number, failsafe: number, clone: number): Figures => ({
  ACTIVE_BYTES: active,
  FAILSAFE_BYTES: failsafe,
  RETAINED_FOR_CLONE_BYTES: clone,
  TIME_TRAVEL_BYTES: timeTravel,
});

export const ADMIN: Me = {
  accountadmin: true,
  airflow_user: "admin",
  home: "/srv/rewind",
  now: "2026-03-04T14:00:00Z",
  role: "ACCOUNTADMIN",
  viewer: "ADMIN",
};

export const ANALYST: Me = { ...ADMIN, accountadmin: false, airflow_user: "analyst", home: "", role: "CLERK", viewer: "ANALYST" };

export const STORAGE: Storage = {
  catalog_found: true,
  days: [
    { as_of: "2026-03-03T13:00:00Z", bytes: figures(2048, 0, 0, 0), date: "2026-03-03" },
    { as_of: "2026-03-04T13:00:00Z", bytes: figures(2048, 512, 1024, 0), date: "2026-03-04" },
  ],
  groups: [
    { bytes: figures(1024, 512, 0, 0), database: "LAB", deleted: false, kind: "DATABASE", schema: null, table: null, table_id: null },
    { bytes: figures(1024, 0, 1024, 0), database: "SHOP", deleted: false, kind: "DATABASE", schema: null, table: null, table_id: null },
  ],
  latest_as_of: "2026-03-04T13:00:00Z",
  metrics_found: true,
  now: "2026-03-04T14:00:00Z",
  role: "ACCOUNTADMIN",
  scope: { database: null, schema: null, table: null },
  totals: figures(2048, 512, 1024, 0),
  viewer: "ADMIN",
};

export const RUN: LifecycleRun = {
  dag_id: "rewind_nightly",
  dag_run_id: "scheduled__2026-03-04T00:00:00+00:00",
  now: "2026-03-04T13:00:00Z",
  run_id: "dd2972eb-f3f0-5d77-9905-38fe0a7e0f00",
  state: "success",
  steps: [
    { elapsed_s: 0.5, objects_seen: 4, run_id: "x", step: "effective_retention" },
    { bytes_moved: 1024, elapsed_s: 1.25, files_moved: 2, run_id: "x", step: "expire_versions" },
    { bytes_purged: 0, elapsed_s: 0.1, files_purged: 0, run_id: "x", step: "purge_failsafe" },
    {
      results: [
        { expectation: "expect_column_values_to_not_be_null", rule: "R33", success: true },
        { expectation: "expect_column_values_to_be_between", rule: "R12", success: false },
      ],
      run_id: "x",
      step: "validate",
      success: false,
    },
  ],
};

export const NIGHT: DagRunSummary = {
  applies: true,
  dag_id: "rewind_nightly",
  dag_run_id: RUN.dag_run_id ?? "",
  lifecycle_run_id: RUN.run_id,
  run: RUN,
  tables: [
    { bytes: figures(0, 0, 1024, 0), database: "LAB", deleted: true, kind: "TABLE", schema: "PUBLIC", table: "OLD", table_id: 5 },
    { bytes: figures(2048, 512, 0, 0), database: "SHOP", deleted: false, kind: "TABLE", schema: "PUBLIC", table: "ORDERS", table_id: 3 },
  ],
  totals: figures(2048, 512, 1024, 0),
};

export const CARD: Card = {
  last_run: RUN,
  latest_as_of: "2026-03-04T13:00:00Z",
  next_purge: {
    bytes: 1024,
    files: 2,
    left_time_travel_at: "2026-03-04T12:00:00Z",
    purge_at: "2026-03-11T12:00:00Z",
    table: "SHOP.PUBLIC.ORDERS",
    table_id: 3,
  },
  now: "2026-03-04T14:00:00Z",
  role: "ACCOUNTADMIN",
  totals: figures(2048, 512, 1024, 0),
  viewer: "ADMIN",
};
