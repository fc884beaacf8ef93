/** How the commands name databases and errors in their one-line messages. */

/** The URL as shown in messages and summaries: never the password. */
export function displayUrl(text: string): string {
  if (!text.startsWith("postgres")) return text;
  try {
    const url = new URL(text);
    if (url.password) url.password = "";
    return url.toString().replace(/:@/, "@");
  } catch {
    return "(invalid URL)";
  }
}

/** An error in one line: a refused connection to several addresses comes as an AggregateError with no message. */
export function oneLine(err: unknown): string {
  const inner = err instanceof AggregateError && err.errors.length > 0 ? err.errors[0] : err;
  const { message, code } = inner as { message?: unknown; code?: unknown };
  const text = typeof message === "string" && message !== "" ? message : String(code ?? inner);
  return text.replace(/\s*\n\s*/g, " ");
}

/**
 * An error of the operating system (a file that is not there, a folder where a file should be, a
 * refused connection): what the machine or the command line got wrong, not the program, so it is
 * said in one line rather than with a stack.
 */
export function isSystemError(err: unknown): err is NodeJS.ErrnoException {
  const { code, syscall } = (err ?? {}) as { code?: unknown; syscall?: unknown };
  return typeof code === "string" && /^E[A-Z]+$/.test(code) && typeof syscall === "string";
}
