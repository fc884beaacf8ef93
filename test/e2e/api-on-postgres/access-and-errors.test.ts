import { testOnPostgres } from "../../helpers/api-on-postgres.ts";

testOnPostgres("access-and-errors");
