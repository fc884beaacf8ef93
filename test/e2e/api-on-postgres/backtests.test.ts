import { testOnPostgres } from "../../helpers/api-on-postgres.ts";

testOnPostgres("backtests");
