/**
 * The paths the app serves and the methods of each, gathered from Fastify's onRoute hook, so that a
 * request for a served path with another method is answered 405 with `Allow`, not 404.
 */
export class RouteTable {
  private readonly routes = new Map<string, { pattern: RegExp; methods: Set<string> }>();

  /** A route as Fastify registered it: its full URL pattern (`/v1/markets/:slug`) and method(s). */
  add(url: string, method: string | string[]): void {
    let route = this.routes.get(url);
    if (!route) {
      route = { pattern: patternOf(url), methods: new Set() };
      this.routes.set(url, route);
    }
    for (const m of Array.isArray(method) ? method : [method]) route.methods.add(m.toUpperCase());
  }

  /** The methods a concrete path answers (OPTIONS always), or an empty list when no route serves it. */
  allowed(path: string): string[] {
    const methods = new Set<string>();
    for (const route of this.routes.values()) {
      if (route.pattern.test(path)) for (const m of route.methods) methods.add(m);
    }
    if (methods.size === 0) return [];
    if (methods.has("GET")) methods.add("HEAD");
    methods.add("OPTIONS");
    return [...methods].sort();
  }
}

/** find-my-way's syntax as a regular expression: `:name` is one segment, `*` the rest of the path. */
function patternOf(url: string): RegExp {
  const parts = url.split(/(:[A-Za-z0-9_]+|\*)/).map((part) => {
    if (part === "*") return ".*";
    if (part.startsWith(":")) return "[^/]+";
    return part.replace(/[.+?^${}()|[\]\\]/g, "\\$&");
  });
  return new RegExp(`^${parts.join("")}$`);
}
