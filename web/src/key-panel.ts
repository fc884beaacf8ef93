import { el, field } from "./dom.ts";

/** The key field: kept in this browser's localStorage, sent only in the X-API-Key header. */

const STORAGE_KEY = "updown.apiKey";

export function storedKey(): string | null {
  try {
    return localStorage.getItem(STORAGE_KEY);
  } catch {
    return null; // storage blocked (a private window's policy): the key lasts as long as the page
  }
}

function store(key: string | null): void {
  try {
    if (key === null) localStorage.removeItem(STORAGE_KEY);
    else localStorage.setItem(STORAGE_KEY, key);
  } catch {
    // as above: nothing to keep it in
  }
}

export function mountKeyPanel(root: HTMLElement, onKey: (key: string | null) => void): void {
  const input = el("input", {
    id: "api-key",
    name: "api-key",
    type: "password",
    autocomplete: "off",
    spellcheck: "false",
    placeholder: "ud_…",
    value: storedKey() ?? "",
  });
  const show = el("input", { id: "show-key", type: "checkbox" });
  show.addEventListener("change", () => (input.type = show.checked ? "text" : "password"));
  const forget = el("button", { type: "button", class: "secondary" }, "Forget key");
  const form = el(
    "form",
    { class: "row", "aria-label": "API key" },
    field("API key", input, "Kept in this browser only (localStorage). Demo keys: data/demo-keys.json."),
    el("div", { class: "field inline" }, show, el("label", { for: "show-key" }, "Show")),
    el("button", { type: "submit" }, "Use key"),
    forget,
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const key = input.value.trim();
    store(key || null);
    onKey(key || null);
  });
  forget.addEventListener("click", () => {
    input.value = "";
    store(null);
    onKey(null);
  });
  root.append(form);
}
