import type { Api } from "./api.ts";
import { el, replace } from "./dom.ts";
import { errorBox } from "./errors.ts";

/** Saves `blob` under `name` through a temporary link (the browser's download, no new window). */
export function save(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const link = el("a", { href: url, download: name, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  // The browser reads the blob after the click returns: the URL is let go of a minute later.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** A button that downloads what `make` gives; a failure is said in `message`. */
export function downloadButton(
  id: string,
  text: string,
  message: HTMLElement,
  make: () => Promise<{ blob: Blob; name: string }>,
): HTMLButtonElement {
  const button = el("button", { type: "button", id }, text);
  button.addEventListener("click", () => {
    button.disabled = true;
    message.replaceChildren();
    make()
      .then(({ blob, name }) => save(blob, name))
      .catch((err: unknown) => replace(message, errorBox(err)))
      .finally(() => (button.disabled = false));
  });
  return button;
}

/** Every trade of a run as a file: `GET /v1/backtest-ai/runs/{id}/trades?format=csv|parquet`. */
export function runExport(api: Api, runId: string, format: "csv" | "parquet") {
  return api.file(
    `/v1/backtest-ai/runs/${encodeURIComponent(runId)}/trades?format=${format}`,
    `run-${runId}-trades.${format}`,
  );
}

/** The definition a run replayed, as the run's definition route answers it (a JSON file). */
export function runDefinition(api: Api, runId: string) {
  return api.file(
    `/v1/backtest-ai/runs/${encodeURIComponent(runId)}/definition`,
    `run-${runId}-definition.json`,
  );
}
