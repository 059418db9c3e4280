// The typed client of Rewind's plugin API (include/rewind/plugin_api.py). Requests go
// to <Airflow base>/rewind/api/v1/..., resolved against the document's base URL (the
// Airflow UI sets <base href> from [api] base_url), with the UI's session cookie.

export const BYTE_CLASSES = [
  "ACTIVE_BYTES",
  "TIME_TRAVEL_BYTES",
  "FAILSAFE_BYTES",
  "RETAINED_FOR_CLONE_BYTES",
] as const;

export type ByteClass = (typeof BYTE_CLASSES)[number];
export type Figures = Record<ByteClass, number>;

export type Day = { as_of: string; bytes: Figures; date: string };

export type Group = {
  bytes: Figures;
  database: string;
  deleted: boolean;
  kind: "DATABASE" | "SCHEMA" | "TABLE";
  schema: string | null;
  table: string | null;
  table_id: number | null;
};

export type Scope = { database: string | null; schema: string | null; table: string | null };

export type Storage = {
  catalog_found: boolean;
  days: Array<Day>;
  groups: Array<Group>;
  latest_as_of: string | null;
  metrics_found: boolean;
  now: string;
  role: string;
  scope: Scope;
  totals: Figures;
  viewer: string;
};

export type DroppedObject = {
  dropped_on: string;
  dropped_with: string | null;
  kind: string;
  name: string;
  object_id: number;
  retention_days: number;
  undrop_until: string;
};

export type FailsafeBatch = {
  bytes: number;
  files: number;
  left_time_travel_at: string;
  purge_at: string;
  table: string;
  table_id: number;
};

export type Step = Record<string, unknown> & { step: string };

export type LifecycleRun = {
  dag_id: string | null;
  dag_run_id: string | null;
  now: string;
  run_id: string;
  state: "failed" | "running" | "success";
  steps: Array<Step> | null;
};

export type Me = {
  accountadmin: boolean;
  airflow_user: string;
  home: string;
  now: string;
  role: string;
  viewer: string;
};

export type Card = {
  last_run: LifecycleRun | null;
  latest_as_of: string | null;
  next_purge: FailsafeBatch | null;
  now: string;
  role: string;
  totals: Figures;
  viewer: string;
};

export type DagRunSummary = {
  applies: boolean;
  dag_id: string;
  dag_run_id: string;
  lifecycle_run_id?: string;
  run: LifecycleRun | null;
  /** The tables of the run's night: its metrics rows (SPEC R33), per table incarnation. */
  tables?: Array<Group>;
  totals?: Figures;
};

export class ApiError extends Error {
  readonly status: number;

  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

export type Params = Record<string, string | null | undefined>;

/** A URL under the Airflow UI's base: "plugin/rewind", "rewind/api/v1/storage", ... */
export const airflowUrl = (path: string, params: Params = {}): string => {
  const url = new URL(path, document.baseURI);

  for (const [key, value] of Object.entries(params)) {
    if (value !== null && value !== undefined && value !== "") {
      url.searchParams.set(key, value);
    }
  }

  return url.toString();
};

export const apiUrl = (path: string, params: Params = {}): string =>
  airflowUrl(`rewind/api/v1/${path}`, params);

export const getJson = async <T>(path: string, params: Params = {}, signal?: AbortSignal): Promise<T> => {
  const response = await fetch(apiUrl(path, params), {
    credentials: "same-origin",
    headers: { Accept: "application/json" },
    signal,
  });

  if (!response.ok) {
    let detail = response.statusText;

    try {
      const body = (await response.json()) as { detail?: unknown };

      detail = typeof body.detail === "string" ? body.detail : detail;
    } catch {
      // not JSON: keep the status text
    }
    throw new ApiError(response.status, detail);
  }

  return (await response.json()) as T;
};
