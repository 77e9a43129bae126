import { useCallback, useEffect, useState } from "preact/hooks";
import { api, describeFailure } from "./api.ts";

/** A GET of the API, loaded when `path` or `round` changes and again on `reload()`. */
export function useApi<T>(path: string | undefined, key?: string, round = 0) {
  const [data, setData] = useState<T>();
  const [error, setError] = useState("");
  const [loading, setLoading] = useState(false);
  const [ownRound, setOwnRound] = useState(0);
  useEffect(() => {
    if (!path) return;
    let current = true;
    setLoading(true);
    api<T>(path, { key })
      .then((d) => {
        if (!current) return;
        setData(d);
        setError("");
      })
      .catch((err) => current && setError(describeFailure(err)))
      .finally(() => current && setLoading(false));
    return () => {
      current = false;
    };
  }, [path, key, round, ownRound]);
  const reload = useCallback(() => setOwnRound((r) => r + 1), []);
  return { data, error, loading, reload };
}
