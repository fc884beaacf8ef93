/**
 * A setting (an environment variable or a command-line flag) that breaks its rule. Its message is one
 * line naming the option and the rule; the CLI prints it and exits with status 2.
 */
export class ConfigError extends Error {}
