import { el, field, select } from "./dom.ts";

/**
 * Copy-as-code: what is on screen as a request in curl, Python (this repository's `updown` client)
 * and TypeScript (the platform's fetch), each runnable as written with the key in UPDOWN_API_KEY
 * (the key itself is never written into a snippet, so one can be pasted anywhere).
 */

export type Language = "curl" | "python" | "typescript";

/** What a snippet asks for: a GET of the API, and the Python client's call that makes it. */
export interface SnippetRequest {
  /** The path and query, e.g. `/v1/backtest-ai/runs/abc`. */
  path: string;
  /** The Python client's call on `client`, e.g. `backtest_run("abc")`. */
  python: string;
}

const LANGUAGES: [Language, string][] = [
  ["curl", "curl"],
  ["python", "Python"],
  ["typescript", "TypeScript"],
];

/** The snippet of `request` in `language`, against the API at `origin`. */
export function snippet(language: Language, origin: string, request: SnippetRequest): string {
  const url = `${origin}${request.path}`;
  switch (language) {
    case "curl":
      return `curl -sS -H "X-API-Key: $UPDOWN_API_KEY" '${url}'\n`;
    case "python":
      return [
        "# pip install ./python (this repository's client); the key from UPDOWN_API_KEY",
        "import json",
        "from updown import Client",
        "",
        `client = Client(base_url=${JSON.stringify(origin)})`,
        `print(json.dumps(client.${request.python}))`,
        "",
      ].join("\n");
    case "typescript":
      return [
        "// Node 22.18+ runs it as it is (save as snippet.ts); the key from UPDOWN_API_KEY",
        `const response = await fetch(${JSON.stringify(url)}, {`,
        '  headers: { "X-API-Key": process.env.UPDOWN_API_KEY ?? "" },',
        "});",
        "if (!response.ok) throw new Error(`HTTP ${response.status}: ${await response.text()}`);",
        "const answer: unknown = await response.json();",
        "console.log(JSON.stringify(answer));",
        "",
      ].join("\n");
  }
}

/** A language chooser, the snippet, and a button that copies it; `what` names what it fetches. */
export function snippetBox(id: string, what: string, request: SnippetRequest): HTMLElement {
  const language = select(
    `${id}-language`,
    LANGUAGES.map(([value, text]) => [value, text]),
    "curl",
  );
  const code = el("pre", { id: `${id}-code`, class: "code", tabindex: 0 });
  const status = el("span", { class: "note", role: "status" });
  const show = () => {
    code.textContent = snippet(language.value as Language, location.origin, request);
    status.textContent = "";
  };
  language.addEventListener("change", show);
  const copy = el("button", { type: "button", id: `${id}-copy` }, "Copy");
  copy.addEventListener("click", () => {
    navigator.clipboard.writeText(code.textContent ?? "").then(
      () => (status.textContent = "Copied."),
      () => (status.textContent = "The browser refused the clipboard: select the code and copy it."),
    );
  });
  show();
  return el(
    "section",
    { class: "snippet", id, "aria-label": `${what} as code` },
    el("h4", {}, `Copy ${what} as code`),
    el(
      "div",
      { class: "row" },
      field(`Code for ${what} in`, language, "Set UPDOWN_API_KEY to your key first."),
      copy,
      status,
    ),
    code,
  );
}
