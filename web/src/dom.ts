/** Small DOM helpers: elements built in code, never from HTML strings (so no markup injection). */

type Attributes = Record<string, string | number | boolean | null | undefined>;
type Child = Node | string | number | null | undefined | false;

/** An element with attributes (`class`, `for`, `aria-*`, ...; false or null leaves one out) and children. */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  ...children: (Child | Child[])[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === false || value === null || value === undefined) continue;
    node.setAttribute(name, value === true ? "" : String(value));
  }
  append(node, ...children);
  return node;
}

export function append(parent: Node, ...children: (Child | Child[])[]): void {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces an element's children. */
export function replace(parent: Element, ...children: (Child | Child[])[]): void {
  parent.replaceChildren();
  append(parent, ...children);
}

export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const node = document.getElementById(id);
  if (!node) throw new Error(`the page has no #${id}`);
  return node as T;
}

/** A labelled control: the label names it for screen readers and for tests alike. */
export function field(label: string, control: HTMLElement, hint?: string): HTMLElement {
  if (!control.id) throw new Error(`a labelled control needs an id (${label})`);
  return el(
    "div",
    { class: "field" },
    el("label", { for: control.id }, label),
    control,
    hint ? el("small", { class: "hint" }, hint) : null,
  );
}

/** A select with its options as [value, text] pairs. */
export function select(id: string, options: [string, string][], value = ""): HTMLSelectElement {
  const node = el("select", { id, name: id });
  for (const [v, text] of options) node.appendChild(el("option", { value: v, selected: v === value }, text));
  return node;
}

/** A table from a header row and body rows; `caption` names it. */
export function table(caption: string, head: string[], rows: Child[][], attributes: Attributes = {}) {
  return el(
    "table",
    attributes,
    el("caption", {}, caption),
    el("thead", {}, el("tr", {}, ...head.map((h) => el("th", { scope: "col" }, h)))),
    el("tbody", {}, ...rows.map((r) => el("tr", {}, ...r.map((c) => el("td", {}, c))))),
  );
}

/** A scrollable frame for a table, so that a wide one never widens the page. */
export function scroller(child: Node, label: string): HTMLElement {
  return el("div", { class: "scroller", role: "region", "aria-label": label, tabindex: 0 }, child);
}
