/** The Content-Type of every JSON answer: the API's bodies, its errors and its documents alike. */
export const JSON_TYPE = "application/json; charset=utf-8";
