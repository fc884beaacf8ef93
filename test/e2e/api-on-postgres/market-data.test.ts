import { testOnPostgres } from "../../helpers/api-on-postgres.ts";

testOnPostgres("market-data");
