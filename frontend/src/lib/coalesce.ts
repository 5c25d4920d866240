// One load at a time (pure): calls made while a load runs share one more load after it.

export function coalesce(load: () => Promise<void>): () => Promise<void> {
  let inflight: Promise<void> | null = null;
  let again = false;
  return () => {
    again = true;
    if (!inflight) {
      inflight = (async () => {
        await null; // let `inflight` be set before the loop can end it
        try {
          while (again) {
            again = false;
            await load();
          }
        } finally {
          again = false;
          inflight = null;
        }
      })();
    }
    return inflight;
  };
}
