import { useEffect, useState } from "react";

import { type Params, getJson } from "./api";

export type Loaded<T> =
  | { error: Error; state: "error" }
  | { state: "loading" }
  | { data: T; state: "ok" };

/** GET one API path; reloads when the path or a parameter changes. */
export const useApi = <T>(path: string | null, params: Params = {}): Loaded<T> => {
  const [loaded, setLoaded] = useState<Loaded<T>>({ state: "loading" });
  const key = JSON.stringify([path, params]);

  useEffect(() => {
    if (path === null) {
      return undefined;
    }
    const controller = new AbortController();

    setLoaded({ state: "loading" });
    getJson<T>(path, params, controller.signal).then(
      (data) => setLoaded({ data, state: "ok" }),
      (error: unknown) => {
        if (!controller.signal.aborted) {
          setLoaded({ error: error instanceof Error ? error : new Error(String(error)), state: "error" });
        }
      },
    );

    return () => controller.abort();
  }, [key]); // the path and the parameters by value: a new object each render is no change

  return loaded;
};
