import { testOnPostgres } from "../../helpers/api-on-postgres.ts";

await testOnPostgres("market-data");
