import { testOnPostgres } from "../../helpers/api-on-postgres.ts";

await testOnPostgres("access-and-errors");
